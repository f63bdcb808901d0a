// `npm test`: runs the unit, scenario and conformance projects as three vitest processes at the same time — in one
// process the projects would run one after the other, and the unit project's longest file mostly waits (an informer
// idle for 90 s) while the scenarios, on several labs side by side (scenarios/support/labs.ts), and the conformance
// tests (the ported Gateway API suite on its own throw-away embedded lab, conformance/README.md; its
// ConformanceReport goes to reports/<run-id>/conformance-report.yaml) need little CPU most of the time. The unit run
// prints as it goes; each later run's output is held and printed, whole and in order, once the runs before it are
// done, then live. Writes JSON and JUnit results to reports/<run-id>/, merged across the runs,
// per-file timings with the worker and lab of each file (lab/report/files-reporter.ts), the HTML summary, and ends
// with the `N passed, N failed` line that CI reads. Extra args go to vitest; with `--project <p>` only that project
// runs (`npm run scenarios`).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { compileCacheDir } from '../lab/compile-cache.ts';
import type { FileTiming } from '../lab/report/files-reporter.ts';
import { renderHtmlSummary } from '../lab/report/html.ts';
import { RUN_ENV, stopProcessesOfRun } from '../lab/run-processes.ts';
import { root, spawnVitest } from './vitest-process.ts';

const runId = process.env.GWLAB_RUN_ID ?? new Date().toISOString().replace(/[:.]/g, '-');
// GWLAB_REPORTS: another folder for the runs' reports than reports/ (a nested run of a test).
const reports = resolve(process.env.GWLAB_REPORTS || join(root, 'reports'));
const outDir = join(reports, runId);
mkdirSync(outDir, { recursive: true });
const latest = join(reports, 'latest');
rmSync(latest, { force: true });
symlinkSync(runId, latest);

const extra = process.argv.slice(2);
const oneProject = extra.some((a) => a === '--project' || a.startsWith('--project='));
interface Run {
  label: string;
  args: string[];
  env?: Record<string, string>;
}
const runs: Run[] = oneProject
  ? [{ label: 'run', args: extra }]
  : [
      ...['unit', 'scenarios'].map((p) => ({ label: p, args: ['--project', p, ...extra] })),
      {
        label: 'conformance',
        args: ['--project', 'conformance', '--reporter=./conformance/support/reporter.ts', ...extra],
        env: { GWLAB_CONFORMANCE_REPORT: join(outDir, 'conformance-report.yaml') },
      },
    ];

const children = new Set<ChildProcess>();
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    interrupted = true;
    for (const c of children) c.kill(sig);
  });
}
// Every process of the run inherits this mark (lab/run-processes.ts); its own, not the run id, which a run started
// inside a test (GWLAB_RUN_ID inherited) shares with the run around it.
const runMark = `${process.pid}-${Date.now()}`;
process.env[RUN_ENV] = runMark;
// The suite runs /usr/bin/kubectl ~750 times, each for a fraction of a second: with Go's garbage collector on one
// thread and less eager (the same kubectl, the same results), each run takes ~28 % less CPU (kubectl get and apply
// against a lab, 20 and 12 pairs: 86 → 63 and 234 → 168 ms), on a machine whose two cores the suite keeps busy.
// A value the caller set is kept.
process.env.GOMAXPROCS ??= '1';
process.env.GOGC ??= '400';

/**
 * The runs' output in run order: the first run's goes straight to the terminal (its own TTY, so vitest draws as
 * usual), each later run's is held until the runs before it have ended.
 */
const held = runs.map(() => [] as Buffer[]);
const done = runs.map(() => false);
let printing = 0;
function output(i: number, chunk: Buffer): void {
  if (i === printing) process.stdout.write(chunk);
  else held[i].push(chunk);
}
function ended(i: number): void {
  if (i !== printing) return;
  while (++printing < runs.length) {
    if (runs.length > 1) console.log(`\n== vitest project ${runs[printing].label}`);
    for (const c of held[printing].splice(0)) process.stdout.write(c);
    if (!done[printing]) break;
  }
}

function vitest(i: number, { label, args, env }: Run): Promise<number> {
  const piped = i > 0;
  const { child, exited } = spawnVitest(
    [
      '--passWithNoTests',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${join(outDir, `vitest-${label}.json`)}`,
      '--reporter=junit',
      `--outputFile.junit=${join(outDir, `junit-${label}.xml`)}`,
      '--reporter=./lab/report/files-reporter.ts',
      ...args,
    ],
    {
      stdio: piped ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: {
        ...process.env,
        ...env,
        GWLAB_RUN_ID: runId,
        GWLAB_REPORT_DIR: outDir,
        GWLAB_FILES_JSON: join(outDir, `files-${label}.json`),
        // Every Node process of the run that inherits this (the vitest workers, the tools the scenarios run, the
        // lab processes) loads its modules through the one compile cache of the machine (lab/compile-cache.ts):
        // a tool's start costs ~0.6 s of CPU instead of ~0.9 s, and the suite starts a few hundred of them.
        NODE_COMPILE_CACHE: compileCacheDir(),
        // Held output keeps its colours when the terminal has them.
        ...(piped && process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: '1' } : {}),
      },
    },
  );
  children.add(child);
  child.stdout?.on('data', (c: Buffer) => output(i, c));
  child.stderr?.on('data', (c: Buffer) => output(i, c));
  return exited.then((code) => {
    children.delete(child);
    done[i] = true;
    ended(i);
    return code;
  });
}

const started = Date.now();
if (runs.length > 1) console.log(`\n== vitest project ${runs[0].label}`);
const codes = await Promise.all(runs.map((r, i) => vitest(i, r)));
// Stopped by a signal, vitest skips its global teardown: what the run started and left (its labs) is stopped here
// (lab/run-processes.ts). Not with KEEP=1, whose scenario lab is meant to outlive the run.
if (interrupted && process.env.KEEP !== '1') {
  const left = await stopProcessesOfRun(runMark);
  if (left.length)
    console.log(
      `\nstopped ${left.length} process(es) the interrupted run left:\n${left.map((p) => `  ${p.pid} ${p.cmd.slice(0, 160)}`).join('\n')}`,
    );
}

// Merge the runs' JSON (the HTML summary and tools read one vitest.json) and JUnit files.
const results = runs
  .map((r) => join(outDir, `vitest-${r.label}.json`))
  .filter((f) => existsSync(f))
  .map((f) => JSON.parse(readFileSync(f, 'utf8')));
let passed = 0;
let failed = 0;
/** Full names of the tests vitest skipped: printed, so "nothing skipped" is visible at the end of every run. */
let skipped: string[] = [];
if (results.length === runs.length) {
  const merged = {
    ...results[0],
    startTime: Math.min(...results.map((r) => r.startTime)),
    numPassedTests: results.reduce((n, r) => n + (r.numPassedTests ?? 0), 0),
    numFailedTests: results.reduce((n, r) => n + (r.numFailedTests ?? 0), 0),
    numTotalTests: results.reduce((n, r) => n + (r.numTotalTests ?? 0), 0),
    testResults: results.flatMap((r) => r.testResults ?? []),
    success: results.every((r) => r.success),
  };
  writeFileSync(join(outDir, 'vitest.json'), JSON.stringify(merged));
  passed = merged.numPassedTests;
  skipped = merged.testResults.flatMap(
    (f: { name: string; assertionResults?: { status: string; fullName: string }[] }) =>
      (f.assertionResults ?? [])
        .filter((a) => a.status === 'skipped' || a.status === 'pending' || a.status === 'todo')
        .map((a) => `${f.name.slice(root.length + 1)} > ${a.fullName}`),
  );
  // A file that failed without a failed test (it did not load, or a hook failed) counts once; numFailedTestSuites
  // would count every describe block around a failed test as well.
  const brokenFiles = merged.testResults.filter(
    (f: { status: string; assertionResults?: { status: string }[] }) =>
      f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length;
  failed = merged.numFailedTests + brokenFiles;
  // A run that fails with no failed test (e.g. an unhandled error) counts once.
  for (const code of codes) if (code !== 0 && failed === 0) failed = 1;
  // Scenario failure hooks record their artifact folders in artifacts/index.json (full test name → folder).
  const indexFile = join(outDir, 'artifacts', 'index.json');
  const artifacts = existsSync(indexFile) ? JSON.parse(readFileSync(indexFile, 'utf8')) : {};
  const files: FileTiming[] = runs
    .map((r) => join(outDir, `files-${r.label}.json`))
    .filter((f) => existsSync(f))
    .flatMap((f) => JSON.parse(readFileSync(f, 'utf8')));
  writeFileSync(join(outDir, 'files.json'), `${JSON.stringify(files, null, 1)}\n`);
  writeFileSync(join(outDir, 'summary.html'), renderHtmlSummary(merged, { runId, root, artifacts, files }));
} else {
  failed = 1;
}
const suites = runs
  .map((r) => join(outDir, `junit-${r.label}.xml`))
  .filter((f) => existsSync(f))
  .map((f) => /<testsuites[^>]*>([\s\S]*)<\/testsuites>/.exec(readFileSync(f, 'utf8'))?.[1] ?? '')
  .join('');
writeFileSync(
  join(outDir, 'junit.xml'),
  `<?xml version="1.0" encoding="UTF-8" ?>\n<testsuites name="gwlab" tests="${passed + failed}" failures="${failed}">${suites}</testsuites>\n`,
);
if (skipped.length) console.log(`\n${skipped.length} skipped:\n${skipped.map((t) => `  ${t}`).join('\n')}`);
console.log(`\nreports: ${outDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(codes.every((c) => c === 0) && failed === 0 ? 0 : 1);
