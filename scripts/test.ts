// `npm test`: runs every vitest project (unit tests and the scenarios), writes JSON and JUnit results to
// reports/<run-id>/, and ends with the `N passed, N failed` line that CI reads. Extra args go to vitest.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderHtmlSummary } from '../lab/report/html.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const runId = process.env.GWLAB_RUN_ID ?? new Date().toISOString().replace(/[:.]/g, '-');
const outDir = join(root, 'reports', runId);
mkdirSync(outDir, { recursive: true });
const latest = join(root, 'reports', 'latest');
rmSync(latest, { force: true });
symlinkSync(runId, latest);

const jsonFile = join(outDir, 'vitest.json');
const args = [
  join(root, 'node_modules', 'vitest', 'vitest.mjs'),
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${jsonFile}`,
  '--reporter=junit',
  `--outputFile.junit=${join(outDir, 'junit.xml')}`,
  ...process.argv.slice(2),
];
const started = Date.now();
const child = spawn(process.execPath, args, {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, GWLAB_RUN_ID: runId, GWLAB_REPORT_DIR: outDir },
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
const code: number = await new Promise((r) => child.on('exit', (c, s) => r(c ?? (s ? 1 : 0))));

let passed = 0;
let failed = 0;
if (existsSync(jsonFile)) {
  const res = JSON.parse(readFileSync(jsonFile, 'utf8'));
  passed = res.numPassedTests ?? 0;
  // A file that failed without a failed test (it did not load, or a hook failed) counts once; numFailedTestSuites
  // would count every describe block around a failed test as well.
  const brokenFiles = (res.testResults ?? []).filter(
    (f: { status: string; assertionResults?: { status: string }[] }) =>
      f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length;
  failed = (res.numFailedTests ?? 0) + brokenFiles;
  // A run that fails with no failed test (e.g. an unhandled error) counts once.
  if (code !== 0 && failed === 0) failed = 1;
  // Scenario failure hooks record their artifact folders in artifacts/index.json (full test name → folder).
  const indexFile = join(outDir, 'artifacts', 'index.json');
  const artifacts = existsSync(indexFile) ? JSON.parse(readFileSync(indexFile, 'utf8')) : {};
  writeFileSync(join(outDir, 'summary.html'), renderHtmlSummary(res, { runId, root, artifacts }));
} else {
  failed = 1;
}
console.log(`\nreports: ${outDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(code === 0 && failed === 0 ? 0 : 1);
