// Temporary folders for tests, removed after the test that made them (or after the file, for one made while the file's
// tests are collected): a test leaves nothing under /tmp. The unit project runs files in shared workers
// (`isolate: false`, as the scenarios do), so a module-level afterAll would run in the first file only; the cleanup is registered where the
// folder is made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(d, { recursive: true, force: true });
  // Inside a test, after it; else after the file. expect's state cannot tell: where files share a worker
  // (isolate: false) it still names the last test of the file before while this file is collected.
  try {
    onTestFinished(remove);
  } catch {
    afterAll(remove);
  }
  return d;
}
