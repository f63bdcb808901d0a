// A file written whole or not at all: the content goes to a temporary file beside it, which is then renamed over it
// (rename is atomic within a file system), so a reader polling the path never sees it empty or half written.
import { renameSync, writeFileSync } from 'node:fs';

export function writeFileWhole(path: string, content: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
}
