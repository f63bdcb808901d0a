// The images built from this repository, as the image catalog's builtins: SYSTEM_IMAGE runs system/main.ts of this
// checkout with the lab's Node, in the checkout's root (the Dockerfile's WORKDIR analogue); the component comes from
// the container's args, as in the image.
import { REPO_ROOT, SYSTEM_IMAGE, systemEntrypoint } from '../../../../system/image.ts';
import type { ImageEntry } from './images.ts';

export function systemImages(opts: { node?: string } = {}): Record<string, ImageEntry> {
  return { [SYSTEM_IMAGE]: { command: systemEntrypoint({ node: opts.node }), workingDir: REPO_ROOT } };
}
