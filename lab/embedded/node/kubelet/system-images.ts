// The images built from this repository, as the image catalog's builtins: SYSTEM_IMAGE runs system/main.ts of this
// checkout with the lab's Node, in the checkout's root (the Dockerfile's WORKDIR analogue); the component comes from
// the container's args, as in the image. Its image environment points Node's compile cache at the lab's
// (lab/compile-cache.ts), as an image would ship one built with it: a pod's modules, the runtime hook and
// system/main.ts included, load warm from the second start on.
import { REPO_ROOT, SYSTEM_IMAGE, systemEntrypoint } from '../../../../system/image.ts';
import { compileCacheDir } from '../../../compile-cache.ts';
import type { ImageEntry } from './images.ts';

export function systemImages(opts: { node?: string; compileCache?: string } = {}): Record<string, ImageEntry> {
  return {
    [SYSTEM_IMAGE]: {
      command: systemEntrypoint({ node: opts.node }),
      workingDir: REPO_ROOT,
      env: { NODE_COMPILE_CACHE: opts.compileCache ?? compileCacheDir() },
    },
  };
}
