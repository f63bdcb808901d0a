// `npm run bench:lab [-- --no-suite] [--runs 3] [--trials 20]`: the lab's figures from issue 6, on the embedded backend:
//   - `npm run lab:up` (a new lab each run) until it returns with the control plane Ready (target < 1.5 s, issue 14;
//     10 s in issue 6), and the median of each of its steps (the breakdown lab:up prints; some run side by side);
//   - `kubectl apply` of an HTTPRoute → first 200 through the gateway's load balancer address, p50 and p99 over 20
//     trials, each with a new hostname (targets: p50 < 1 s, p99 < 3 s);
//   - change → effect in traffic (issue 14; lab/change-effect.ts): route edit, policy edit, ReferenceGrant created,
//     selector relabel, p50 and p99 over --changes 100 of each (target: p99 < 250 ms);
//   - the scenario suite's wall time (`npm run scenarios`), unless --no-suite.
// Writes reports/bench/lab.json and lab.md, with the load average beside the figures (the machine is shared).
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import minimist from 'minimist';
import { labDown } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { readLabRecord } from '../lab/state.ts';
import { send } from '../lab/toolkit/http.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { changeEffectReport, changeToEffect } from './lab/change-effect.ts';
import { repoRoot } from './shared/paths.ts';
import { removeTempDir, runNodeTimed, tempDir } from './shared/processes.ts';
import { progress, reportJson, writeReports } from './shared/reports.ts';
import { nearestRank } from './shared/stats.ts';

const args = minimist(process.argv.slice(2), {
  boolean: ['suite'],
  default: { suite: true, runs: 3, trials: 20, changes: 100 },
});
const RUNS = Number(args.runs);
const TRIALS = Number(args.trials);
const TARGETS = { labUpMs: 1_500, routeP50Ms: 1_000, routeP99Ms: 3_000 };
const log = progress('lab');
const home = tempDir('gwlab-bench-lab-');
const NAME = 'bench';

/** Runs a script of the repository as a user would, in this bench's lab home (GWLAB_HOME), and times it. */
const runNode = (script: string, argv: string[], env: NodeJS.ProcessEnv = {}) =>
  runNodeTimed([join(repoRoot, script), ...argv], { cwd: repoRoot, env: { GWLAB_HOME: home, ...env } });

function kubectlApply(kubeconfig: string, context: string, yaml: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = execFile(
      '/usr/bin/kubectl',
      ['--kubeconfig', kubeconfig, '--context', context, 'apply', '-f', '-'],
      (err, _o, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve()),
    );
    c.stdin!.end(yaml);
  });
}

/** lab:up's `✓ <step> (<n> ms)` / `(<n> s)` lines: milliseconds by step. */
function stepTimes(out: string): Record<string, number> {
  const steps: Record<string, number> = {};
  for (const m of out.matchAll(/^✓ (.+) \(([\d.]+) (ms|s)\)$/gm))
    steps[m[1]] = Number(m[2]) * (m[3] === 's' ? 1000 : 1);
  return steps;
}

/** The median of each step over the runs that had it, in the order of the first run's output. */
function stepMedians(runs: Record<string, number>[]): Record<string, number> {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r)))];
  return Object.fromEntries(
    names.map((n) => [
      n,
      Math.round(
        nearestRank(
          runs.flatMap((r) => (n in r ? [r[n]] : [])),
          50,
        ),
      ),
    ]),
  );
}

/** lab:up RUNS times (the last one with the sample application, and left up): wall times and each run's steps. */
async function labUpRuns(): Promise<{ labUp: number[]; labUpSteps: Record<string, number>[] }> {
  const labUp: number[] = [];
  const labUpSteps: Record<string, number>[] = [];
  for (let i = 0; i < RUNS; i++) {
    const last = i === RUNS - 1;
    const r = await runNode('scripts/lab-up.mjs', ['--name', NAME, ...(last ? ['--with-sampleapp'] : [])]);
    if (r.code !== 0) throw new Error(`lab:up failed:\n${r.out.slice(-3000)}`);
    labUp.push(r.ms);
    labUpSteps.push(stepTimes(r.out));
    log(`lab:up run ${i + 1}/${RUNS}: ${Math.round(r.ms)} ms${last ? ' (with the sample application)' : ''}`);
    if (!last) await labDown({ name: NAME, home, progress: new Progress({ quiet: true }) });
  }
  return { labUp, labUpSteps };
}

async function main(): Promise<void> {
  const load0 = loadavg();
  const { labUp, labUpSteps } = await labUpRuns();

  // ---- HTTPRoute apply → first 200 ----------------------------------------------------------------------------
  const rec = readLabRecord(NAME, home)!;
  const context = String(rec.context ?? `gwlab-${NAME}`);
  const kube = Kube.fromFile(rec.kubeconfig, context);
  await kube.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bench, namespace: sampleapp}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 8080}]
`);
  await kube.waitForCondition('gateway.networking.k8s.io/v1', 'Gateway', 'bench', 'sampleapp', 'Programmed', {
    timeoutMs: 60_000,
  });
  await kube.waitForRollout('sampleapp', 'sampleapp', { timeoutMs: 60_000 });
  const ip = await waitFor(
    'the bench Gateway load balancer address',
    async () => {
      const s = await kube.get('v1', 'Service', 'bench', 'sampleapp');
      const v = s?.status?.loadBalancer?.ingress?.[0]?.ip;
      return { ok: !!v, value: v as string };
    },
    { timeoutMs: 30_000 },
  );
  const routeMs: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const host = `t${i}.bench.example`;
    const t0 = performance.now();
    await kubectlApply(
      rec.kubeconfig,
      context,
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bench-${i}, namespace: sampleapp}
spec:
  parentRefs: [{name: bench}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`,
    );
    await waitFor(
      `first 200 for ${host}`,
      async () => {
        const r = await send({ url: `http://${ip}:8080`, path: '/headers', host, timeoutMs: 2_000 });
        return { ok: r.status === 200, seen: r.status };
      },
      { timeoutMs: 30_000, intervalMs: 10 },
    );
    routeMs.push(performance.now() - t0);
  }
  log(
    `route apply → first 200: p50 ${Math.round(nearestRank(routeMs, 50))} ms, p99 ${Math.round(nearestRank(routeMs, 99))} ms`,
  );
  const effects = changeEffectReport(
    await changeToEffect(kube, 'bench', `http://${ip}:8080`, Number(args.changes), log),
  );
  await labDown({ name: NAME, home, progress: new Progress({ quiet: true }) });

  // ---- the scenario suite -------------------------------------------------------------------------------------
  let suite: { ms: number; line: string } | undefined;
  if (args.suite) {
    log('running the scenario suite (npm run scenarios); --no-suite skips this');
    const r = await runNode('scripts/test.ts', ['--project', 'scenarios'], { GWLAB_HOME: undefined });
    const line = /^\d+ passed, \d+ failed$/m.exec(r.out)?.[0] ?? `exit ${r.code}`;
    suite = { ms: r.ms, line };
    log(`scenario suite: ${Math.round(r.ms / 1000)} s (${line})`);
  }

  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, loadavgBefore: load0, loadavgAfter: loadavg() },
    labUpMs: {
      runs: labUp.map(Math.round),
      p50: Math.round(nearestRank(labUp, 50)),
      target: TARGETS.labUpMs,
      steps: stepMedians(labUpSteps),
    },
    routeToFirst200Ms: {
      trials: routeMs.map(Math.round),
      p50: Math.round(nearestRank(routeMs, 50)),
      p99: Math.round(nearestRank(routeMs, 99)),
      targets: { p50: TARGETS.routeP50Ms, p99: TARGETS.routeP99Ms },
    },
    changeToEffectMs: effects.json,
    scenarioSuite: suite ? { wallMs: Math.round(suite.ms), result: suite.line } : 'skipped (--no-suite)',
  };
  const ok = (v: number, t: number) => (v < t ? 'met' : 'MISSED');
  const md = `# bench:lab (${result.date})

Machine: ${result.machine.cpus} cores, load average ${load0.map((l) => l.toFixed(2)).join(' ')} before, ${result.machine.loadavgAfter.map((l) => l.toFixed(2)).join(' ')} after.

| measure | value | target | |
|---|---|---|---|
| lab:up → control plane Ready (p50 of ${RUNS}; runs ${result.labUpMs.runs.join(', ')} ms) | ${result.labUpMs.p50} ms | < ${TARGETS.labUpMs} ms | ${ok(result.labUpMs.p50, TARGETS.labUpMs)} |
| HTTPRoute apply → first 200, p50 of ${TRIALS} | ${result.routeToFirst200Ms.p50} ms | < ${TARGETS.routeP50Ms} ms | ${ok(result.routeToFirst200Ms.p50, TARGETS.routeP50Ms)} |
| HTTPRoute apply → first 200, p99 of ${TRIALS} | ${result.routeToFirst200Ms.p99} ms | < ${TARGETS.routeP99Ms} ms | ${ok(result.routeToFirst200Ms.p99, TARGETS.routeP99Ms)} |
${effects.rows.join('\n')}
| scenario suite wall time | ${suite ? `${Math.round(suite.ms / 1000)} s (${suite.line})` : 'skipped'} | | |

lab:up's steps, median ms (side by side: the three install steps start once the API server serves, while the embedded cluster step's controllers and node agent start): ${Object.entries(
    result.labUpMs.steps,
  )
    .map(([n, ms]) => `${n} ${ms}`)
    .join('; ')}.
`;
  writeReports({ 'lab.json': reportJson(result), 'lab.md': md });
  process.stdout.write(md);
}

try {
  await main();
} finally {
  await labDown({ name: NAME, home, progress: new Progress({ quiet: true }) }).catch(() => undefined);
  removeTempDir(home);
}
