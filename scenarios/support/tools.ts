// Runs a command-line tool (scripts/<tool>.ts) as a user would: a process of its own on the project's Node, pointed at
// the scenario lab by --kubeconfig/--context (or at no cluster, for offline tools), with its exit code and output.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../lab/install.ts';
import type { ScenarioLab } from './lab.ts';

export interface ToolRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export function runTool(
  lab: ScenarioLab | null,
  tool: string,
  args: string[],
  opts: { timeoutMs?: number; input?: string } = {},
): Promise<ToolRun> {
  const started = performance.now();
  const target = lab ? [`--kubeconfig=${lab.kubeconfig}`, ...(lab.context ? [`--context=${lab.context}`] : [])] : [];
  // As its npm script runs it: compile cache on, client-node from its bundle (scripts/preload.mjs).
  const argv = [
    '--import',
    join(REPO_ROOT, 'scripts', 'preload.mjs'),
    join(REPO_ROOT, 'scripts', `${tool}.ts`),
    ...args,
    ...target,
  ];
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      argv,
      {
        cwd: REPO_ROOT,
        timeout: opts.timeoutMs ?? 60_000,
        maxBuffer: 64 << 20,
        env: { ...process.env, FORCE_COLOR: '0' },
      },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout,
          stderr,
          ms: Math.round(performance.now() - started),
        }),
    );
    child.stdin?.end(opts.input ?? '');
  });
}

/** `explain -o json` of one object: the report, the exit code, and the text form for failure messages. */
export async function explainJson(
  lab: ScenarioLab,
  target: string,
  namespace: string,
): Promise<{ code: number; report: any; run: ToolRun }> {
  const run = await runTool(lab, 'explain', [target, '-n', namespace, '-o', 'json']);
  let report: any;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    throw new Error(
      `explain ${target} -n ${namespace} printed no JSON (exit ${run.code}): ${run.stderr || run.stdout}`,
    );
  }
  return { code: run.code, report, run };
}
