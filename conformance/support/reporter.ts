// The vitest reporter that writes the run's ConformanceReport (utils/report.ts): each conformance describe (its task
// meta from support/run.ts) is passed when all its cases passed, failed when one failed (or its hooks did), skipped
// when vitest skipped it. GWLAB_CONFORMANCE_REPORT names the file (default reports/conformance/<date>-report.yaml);
// GWLAB_CONFORMANCE_PROFILES the profiles (comma-separated, default every ported profile: the tests of all of them run).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Reporter, TestModule, TestSuite } from 'vitest/node';
import { SYSTEM_VERSION } from '../../system/image.ts';
import { PROFILES } from '../utils/features.ts';
import { buildReport, reportYaml, type TestResult, unportedTests } from '../utils/report.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function resultOf(suite: TestSuite): TestResult['result'] {
  const state = suite.state();
  if (state === 'skipped') return 'skipped';
  if (state === 'failed') return 'failed';
  return suite.errors().length ? 'failed' : 'passed';
}

export function profilesFromEnv(env: NodeJS.ProcessEnv = process.env) {
  const names = (env.GWLAB_CONFORMANCE_PROFILES || Object.keys(PROFILES).join(',')).split(',').map((s) => s.trim());
  return names.map((n) => {
    const p = PROFILES[n];
    if (!p) throw new Error(`unknown profile ${n} (known: ${Object.keys(PROFILES).join(', ')})`);
    return p;
  });
}

export default class ConformanceReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const results: TestResult[] = [];
    for (const m of modules) {
      // The top-level describe of each file is the upstream test (its nested describes inherit the meta).
      for (const s of m.children.suites()) {
        const c = s.meta().conformance;
        if (c) results.push({ ...c, result: resultOf(s) });
      }
    }
    if (!results.length) return;
    // A run of some tests only (--run) reports those; a whole run also counts upstream's tests that are not ported.
    const whole = !process.env.GWLAB_CONFORMANCE_RUN;
    const unported = whole ? unportedTests(new Set(results.map((r) => r.shortName))) : [];
    const channel = process.env.GWLAB_CONFORMANCE_CHANNEL === 'experimental' ? 'experimental' : 'standard';
    const report = buildReport(results, { profiles: profilesFromEnv(), version: SYSTEM_VERSION, unported, channel });
    const file =
      process.env.GWLAB_CONFORMANCE_REPORT ||
      join(ROOT, 'reports', 'conformance', `${new Date().toISOString().replace(/[:.]/g, '-')}-report.yaml`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, reportYaml(report));
    process.stdout.write(`\nConformanceReport: ${file}\n`);
  }
}
