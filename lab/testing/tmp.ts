// Temporary folders for tests, removed after the test that made them (or after the file, for one made while the file's
// tests are collected): a test leaves nothing under /tmp. The unit project runs files in shared workers
// (`isolate: false`), so a module-level afterAll would run in the first file only; the cleanup is registered where the
// folder is made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, onTestFinished } from 'vitest';

export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(d, { recursive: true, force: true });
  if (expect.getState().currentTestName !== undefined) onTestFinished(remove);
  else afterAll(remove);
  return d;
}
