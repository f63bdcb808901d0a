// Where a scenario puts a large scratch folder it writes and throws away (scenario 91's fresh clone and its `npm ci`:
// ~40,000 files, 1.2 GB): the machine's memory filesystem (/dev/shm) when it is a tmpfs with room to spare, else the
// usual temporary folder. Writing node_modules to disk cost that `npm ci` 17-25 s of kernel CPU on the 2-core machine
// against 9 s on tmpfs (two clones side by side, interleaved: 28.1, 32.7 s → 20.5, 20.5 s wall; 37-45 → 26 CPU-s);
// the scenario checks the README's commands, not the disk.
import { accessSync, constants, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';

/** statfs f_type of a tmpfs (linux/magic.h TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;

export function scratchRoot(opts: { dir?: string; minFreeBytes?: number } = {}): string {
  const dir = opts.dir ?? '/dev/shm';
  const minFree = opts.minFreeBytes ?? 4 * 1024 ** 3;
  try {
    accessSync(dir, constants.W_OK);
    const s = statfsSync(dir);
    if (s.type === TMPFS_MAGIC && s.bavail * s.bsize >= minFree) return dir;
  } catch {
    // Not there, not writable: the usual folder.
  }
  return tmpdir();
}
