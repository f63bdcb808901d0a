// The one image of system/ and the command it runs. The embedded cluster's image catalog runs systemEntrypoint() for
// SYSTEM_IMAGE on the host; the Dockerfile's ENTRYPOINT is IMAGE_ENTRYPOINT inside the image (image.test.ts checks).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pkg from '../package.json' with { type: 'json' };

export const SYSTEM_IMAGE_REPOSITORY = 'gwlab.local/system';
/** The repository's version (package.json): the image is never tagged `latest`. */
export const SYSTEM_VERSION: string = pkg.version;
export const SYSTEM_IMAGE = `${SYSTEM_IMAGE_REPOSITORY}:${SYSTEM_VERSION}`;

/** The repository checkout this module belongs to. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the Dockerfile puts the repository inside the image (its WORKDIR). */
export const IMAGE_ROOT = '/app';

/**
 * The entry command: node, then the absolute path of system/main.ts. The component and its flags are appended, as
 * a container's args follow its ENTRYPOINT. On the host, node is the running Node 24 (the project's own).
 */
export function systemEntrypoint(opts: { root?: string; node?: string } = {}): string[] {
  return [opts.node ?? process.execPath, join(opts.root ?? REPO_ROOT, 'system', 'main.ts')];
}

/** The Dockerfile's ENTRYPOINT: the same command, with the image's node and paths. */
export const IMAGE_ENTRYPOINT: readonly string[] = systemEntrypoint({ root: IMAGE_ROOT, node: 'node' });
