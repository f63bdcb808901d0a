// `reports/<run-id>/artifacts/index.json`: full test name → the failure-artifact folder (relative to the report) that
// summary.html links. Scenario files run side by side in several processes (scenarios/support/labs.ts), so each
// update is a read-modify-write under `index.json.lock`, created exclusively (O_EXCL, the classic lock-file
// pattern); a lock left by a killed process is taken over once it is 30 s old.
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const STALE_MS = 30_000;

async function lock(file: string, timeoutMs: number): Promise<() => void> {
  const path = `${file}.lock`;
  for (const end = Date.now() + timeoutMs; ; ) {
    try {
      closeSync(openSync(path, 'wx'));
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > end) throw err;
      const since = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > STALE_MS) rmSync(path, { force: true });
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 20));
    }
  }
}

/** Records `names` → `rel` in `<artifactsRoot>/index.json`, keeping what other processes recorded. */
export async function recordArtifacts(artifactsRoot: string, names: string[], rel: string): Promise<void> {
  const file = join(artifactsRoot, 'index.json');
  const unlock = await lock(file, 60_000);
  try {
    let index: Record<string, string> = {};
    if (existsSync(file)) {
      try {
        index = JSON.parse(readFileSync(file, 'utf8'));
      } catch {}
    }
    for (const n of names) index[n] = rel;
    // Written whole and renamed into place, so a reader never sees half a file.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(index, null, 2)}\n`);
    renameSync(tmp, file);
  } finally {
    unlock();
  }
}
