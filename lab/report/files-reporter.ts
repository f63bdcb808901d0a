// A vitest reporter that writes, per test file, what vitest's JSON report leaves out: the file's whole time (worker
// set-up, import, every hook and test; the JSON report's start/end span only the tests, so a scenario that does its
// work in beforeAll shows 0 ms there), the worker that ran it (vitest's concurrencyId, i.e. its VITEST_POOL_ID) and
// the lab it ran on (the task meta `lab` that scenarios/support/lab.ts sets). scripts/test.ts passes it with
// `--reporter=./lab/report/files-reporter.ts` and the file to write in GWLAB_FILES_JSON; summary.html shows it.
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

declare module 'vitest' {
  interface TaskMeta {
    /** The lab a scenario file ran on (scenarios/support/lab.ts). */
    lab?: string;
  }
}

export interface FileTiming {
  /** Absolute path, as in vitest's JSON report. */
  file: string;
  project: string;
  state: string;
  /** Worker set-up, setup files, import, hooks and tests of the file, in ms. */
  ms: number;
  /** VITEST_POOL_ID of the worker that ran it (0 when it did not run). */
  worker: number;
  lab?: string;
}

export function fileTiming(m: TestModule): FileTiming {
  const d = m.diagnostic();
  return {
    file: m.moduleId,
    project: m.project.name,
    state: m.state(),
    ms: Math.round(d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration),
    worker: d.concurrencyId,
    lab: m.meta().lab,
  };
}

export default class FilesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const out = process.env.GWLAB_FILES_JSON;
    if (out) writeFileSync(out, `${JSON.stringify(modules.map(fileTiming), null, 1)}\n`);
  }
}
