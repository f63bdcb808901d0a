// Failure artifacts of the scenario suite. When a scenario test fails, the lab's state is collected right then — before
// the scenario's afterAll deletes its namespace — into `reports/<run-id>/artifacts/<scenario>/<test>/` with
// lab/tools/collect.ts (resources with statuses, events, every pod's logs, the control plane's /snapshots/krt and
// /snapshots/xds, every proxy's config_dump?include_eds and stats/prometheus), and recorded in
// `reports/<run-id>/artifacts/index.json` (full test name → folder, relative to the report), which scripts/test.ts
// links from summary.html.
//
// This module is the scenario project's setupFile (vitest.config.ts), so every scenario file gets the hook without
// importing anything. A scenario may narrow what is collected with artifactNamespaces(...) and call
// collectSuiteFailure(suite) first thing in its afterAll, so a failed beforeAll is collected before its cleanup;
// endScenario does that, then the scenario's own closing and the deletion of its namespaces.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterEach, inject } from 'vitest';
import { recordArtifacts } from '../../lab/report/artifact-index.ts';
import { Kube } from '../../lab/toolkit/kube.ts';
import { type CollectIndex, collect } from '../../lab/tools/collect.ts';
import { type ScenarioLab, workerLab } from './lab.ts';

/** Namespaces always collected besides the scenario's own: the system, and the sample apps the contract uses. */
export const SYSTEM_NAMESPACES = ['gwvendor-system', 'sampleapp', 'extauth', 'ratelimit', 'extproc'];

interface State {
  namespaces: Set<string>;
  collected: Set<string>;
}
// On globalThis: the setupFile and a scenario's own import must share one registry (they may be two module instances).
const shared = globalThis as typeof globalThis & { __gwlabArtifacts?: State };
shared.__gwlabArtifacts ??= { namespaces: new Set<string>(), collected: new Set<string>() };
const state: State = shared.__gwlabArtifacts;

/** Restricts collection to these namespaces (plus SYSTEM_NAMESPACES); without a call, every namespace is collected. */
export function artifactNamespaces(...namespaces: string[]): void {
  for (const n of namespaces) state.namespaces.add(n);
}

/** reports/<run-id> of this run: the one scripts/test.ts made (GWLAB_REPORT_DIR), else the global setup's. */
export function reportDir(): string {
  const fromEnv = process.env.GWLAB_REPORT_DIR;
  if (fromEnv) return fromEnv;
  try {
    const provided = inject('reportDir');
    if (provided) return provided;
  } catch {}
  return join(process.cwd(), 'reports', `vitest-${process.pid}`);
}

/** A folder name from a title: lower case, `[a-z0-9-]`, at most 80 characters. */
export function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80)
      .replace(/-+$/, '') || 'test'
  );
}

/** The scenario's name: its file name without `.test.ts`. */
export function scenarioName(filepath: string): string {
  return basename(filepath).replace(/\.(test|spec|scenario)\.[cm]?[jt]s$/, '');
}

export interface FailureInfo {
  /** Scenario file (absolute or relative path). */
  file: string;
  /** vitest's JSON report name of the test: ancestor titles and title joined by a space. */
  fullName: string;
  /** Further names recorded in index.json for the same folder (the tests of a suite whose beforeAll failed). */
  alsoFor?: string[];
  /** The test's (or suite's) title path, for the folder name. */
  titles: string[];
  errors: string[];
}

export interface ArtifactRecord {
  dir: string;
  /** What collect.ts wrote (its index), or undefined when it failed. */
  index?: CollectIndex;
  error?: string;
}

/**
 * Collects the lab's state for one failure into `<report>/artifacts/<scenario>/<test>/` and records it in
 * `<report>/artifacts/index.json`. Never throws: a collection error is written next to what was collected.
 */
export async function collectFailure(
  kube: Kube,
  f: FailureInfo,
  opts: { report?: string; namespaces?: string[] } = {},
): Promise<ArtifactRecord> {
  const report = opts.report ?? reportDir();
  const root = join(report, 'artifacts');
  const dir = join(root, scenarioName(f.file), slug(f.titles.join(' ')));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'failure.txt'),
    `${f.fullName}\nfile: ${f.file}\ncollected: ${new Date().toISOString()}\n\n${f.errors.join('\n\n')}\n`,
  );
  const namespaces =
    opts.namespaces ?? (state.namespaces.size ? [...new Set([...SYSTEM_NAMESPACES, ...state.namespaces])] : undefined);
  const rec: ArtifactRecord = { dir };
  const started = performance.now();
  try {
    rec.index = await collect(kube, dir, { namespaces });
  } catch (err) {
    rec.error = (err as Error).stack ?? String(err);
    writeFileSync(join(dir, 'collect-error.txt'), `${rec.error}\n`);
  }
  await recordArtifacts(root, [f.fullName, ...(f.alsoFor ?? [])], relative(report, dir));
  const failed = rec.index?.collectors.filter((c) => c.status === 'failed') ?? [];
  const problems = rec.error
    ? ', with errors: see collect-error.txt'
    : failed.length
      ? `, failed collectors: ${failed.map((c) => c.name).join(', ')} (see index.json there)`
      : '';
  process.stderr.write(
    `failure artifacts for "${f.fullName}": ${dir} (${Math.round(performance.now() - started)} ms${problems})\n`,
  );
  return rec;
}

function labKube(): Kube | undefined {
  try {
    const { kubeconfig, context } = workerLab();
    return kubeconfig ? Kube.fromFile(kubeconfig, context || undefined) : undefined;
  } catch {
    return undefined;
  }
}

function errorsOf(result: { errors?: Array<{ message?: string; stack?: string }> } | undefined): string[] {
  return (result?.errors ?? []).map((e) => e.stack ?? e.message ?? String(e));
}

interface TaskLike {
  name: string;
  type?: string;
  tasks?: TaskLike[];
  suite?: TaskLike;
  file?: { filepath: string };
  result?: { state?: string; errors?: Array<{ message?: string; stack?: string }> };
}

/** Titles from the outermost describe to the task (the file itself is not a title). */
function titlesOf(task: TaskLike): string[] {
  const out: string[] = [];
  // The file is a suite too (its own `file`); it ends the walk.
  for (let t: TaskLike | undefined = task; t && (t as unknown) !== t.file; t = t.suite) out.unshift(t.name);
  return out;
}

function testsOf(t: TaskLike): TaskLike[] {
  return t.tasks ? t.tasks.flatMap(testsOf) : t.type === 'test' ? [t] : [];
}

/**
 * For a scenario's afterAll, before its cleanup: when the suite's beforeAll failed (its tests never ran, so the
 * per-test hook never fired), collects the artifacts once for the suite.
 */
export async function collectSuiteFailure(suite: TaskLike): Promise<void> {
  const errors = errorsOf(suite.result);
  if (!errors.length) return;
  await collectOnce(suite, errors, {
    suffix: ['beforeAll'],
    // Its tests never ran (the report lists them as skipped): the summary links each of them to this folder.
    alsoFor: testsOf(suite).map((t) => titlesOf(t).join(' ')),
  });
}

/**
 * A scenario's afterAll: the failure artifacts first (a failed beforeAll included), then `close` (admin sessions,
 * clients, port-forwards; each awaited, a failure ignored), then its namespaces deleted without waiting, unless KEEP=1.
 */
export async function endScenario(
  lab: ScenarioLab,
  suite: TaskLike,
  namespaces: string[],
  ...close: (() => unknown)[]
): Promise<void> {
  await collectSuiteFailure(suite);
  for (const c of close)
    await Promise.resolve()
      .then(c)
      .catch(() => undefined);
  if (process.env.KEEP === '1') return;
  for (const n of namespaces) await lab.k(['delete', 'namespace', n, '--wait=false']).catch(() => undefined);
}

/** Collects the artifacts of a failed test or suite, once per full name, while the lab is there. */
async function collectOnce(
  task: TaskLike,
  errors: ReturnType<typeof errorsOf>,
  extra: { suffix?: string[]; alsoFor?: string[] } = {},
): Promise<void> {
  const titles = titlesOf(task);
  const fullName = titles.join(' ');
  if (state.collected.has(fullName)) return;
  state.collected.add(fullName);
  const kube = labKube();
  if (!kube) return;
  await collectFailure(kube, {
    file: task.file?.filepath ?? 'unknown',
    fullName,
    titles: [...titles, ...(extra.suffix ?? [])],
    ...(extra.alsoFor ? { alsoFor: extra.alsoFor } : {}),
    errors,
  });
}

/**
 * Registers the per-test hook for the file about to run, whose registry starts empty: vitest evaluates a setupFile
 * before every test file, also when the files of a worker share one process (isolate: false, vitest.config.ts),
 * where the registry on globalThis outlives the file. A second registration in one file (the scenario's own import
 * evaluating this module again) is harmless: collectOnce collects a failure once.
 */
export function installFailureArtifacts(): void {
  state.namespaces.clear();
  state.collected.clear();
  // afterEach sees the test already marked failed, and runs before the suite's afterAll cleanup.
  afterEach(async ({ task: t }) => {
    const task = t as unknown as TaskLike;
    if (task.result?.state !== 'fail') return;
    await collectOnce(task, errorsOf(task.result));
  }, 120_000);
}

installFailureArtifacts();
