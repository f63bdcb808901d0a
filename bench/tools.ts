// `npm run bench:tools [-- --runs 5] [--gateways 10] [--routes 100]`: how long the debug tools take on a lab of
// realistic size (issue 7: each command answers within 5 s with 10 Gateways and 100 routes). A fresh embedded lab
// gets 10 Gateways (one proxy pod each), 100 HTTPRoutes spread over them, a TrafficPolicy per Gateway and one per
// route-pair; then each command runs as a user runs it (its own Node process, end to end, port-forwards included):
// explain of a route, of a Gateway and of a policy, lab:status -A and lab:bundle. Writes reports/bench/tools.json
// and tools.md with the load average beside the figures (the machine is shared).
import { statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import minimist from 'minimist';
import { readManifest } from '../lab/install.ts';
import { labDown, labUp } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { repoRoot } from './shared/paths.ts';
import { removeTempDir, runNodeTimed, tempDir } from './shared/processes.ts';
import { progress, reportJson, writeReports } from './shared/reports.ts';
import { nearestRank } from './shared/stats.ts';

const args = minimist(process.argv.slice(2), { default: { runs: 5, gateways: 10, routes: 100 } });
const RUNS = Number(args.runs);
const GATEWAYS = Number(args.gateways);
const ROUTES = Number(args.routes);
const TARGET_MS = 5_000;
const NS = 'bench-tools';
const NAME = 'benchtools';
const home = tempDir('gwlab-bench-tools-');
const out = tempDir('gwlab-bench-tools-out-');
const log = progress('tools');

function resources(): string {
  const docs: string[] = [`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${NS}}`];
  for (let g = 0; g < GATEWAYS; g++) {
    docs.push(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw${g}, namespace: ${NS}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: Same}}}]`);
    docs.push(`apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: gw${g}-timeouts, namespace: ${NS}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw${g}}]
  timeouts: {request: 20s}`);
  }
  for (let r = 0; r < ROUTES; r++) {
    docs.push(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r${r}, namespace: ${NS}, labels: {pair: p${Math.floor(r / 2)}}}
spec:
  parentRefs: [{name: gw${r % GATEWAYS}}]
  hostnames: [r${r}.bench.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a}}, {headers: [{name: x-r, value: "${r}"}]}]
    backendRefs: [{name: sampleapp, port: 8000}]
  - backendRefs: [{name: sampleapp, port: 8000}]`);
    if (r % 2 === 0) {
      docs.push(`apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: pair${r / 2}, namespace: ${NS}}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {pair: p${r / 2}}}]
  retry: {attempts: 2}
  headerModifiers: {response: {set: [{name: x-pair, value: p${r / 2}}]}}`);
    }
  }
  return docs.join('\n---\n');
}

/** Runs `scripts/<script>.ts` as its npm script runs it (scripts/preload.mjs first), against the bench's lab, in the
 * output folder; times it. */
function runTool(script: string, argv: string[], kubeconfig: string, context: string) {
  const args = [
    '--import',
    join(repoRoot, 'scripts', 'preload.mjs'),
    join(repoRoot, 'scripts', `${script}.ts`),
    ...argv,
    `--kubeconfig=${kubeconfig}`,
    `--context=${context}`,
  ];
  return runNodeTimed(args, { cwd: out });
}

async function main(): Promise<void> {
  const progress = new Progress({ sink: { write: (l) => log(l) } });
  const up = await labUp({ name: NAME, home, backend: 'embedded', progress });
  const kube = Kube.fromFile(up.kubeconfig, up.context);
  try {
    const t0 = performance.now();
    await kube.apply(resources());
    await kube.apply(
      readManifest('sampleapp.yaml')
        .filter((d) => d.kind !== 'Namespace')
        .map((d) => ({ ...d, metadata: { ...d.metadata, namespace: NS } })),
    );
    for (let g = 0; g < GATEWAYS; g++) {
      await kube.waitForCondition('gateway.networking.k8s.io/v1', 'Gateway', `gw${g}`, NS, 'Programmed', {
        timeoutMs: 180_000,
      });
    }
    // Every route in its proxy's config: the tools then see the lab at its full size.
    await waitFor(
      `all ${ROUTES} routes accepted`,
      async () => {
        const routes = await kube.list('gateway.networking.k8s.io/v1', 'HTTPRoute', NS);
        const n = routes.filter((r) =>
          (r.status?.parents ?? []).some((p: any) =>
            (p.conditions ?? []).some((c: any) => c.type === 'ResolvedRefs' && c.status === 'True'),
          ),
        ).length;
        return { ok: n === ROUTES, seen: `${n}/${ROUTES}` };
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    log(
      `lab with ${GATEWAYS} Gateways, ${ROUTES} routes and ${GATEWAYS + ROUTES / 2} policies ready in ${Math.round(performance.now() - t0)} ms`,
    );

    const commands: { label: string; script: string; argv: string[] }[] = [
      { label: 'explain httproute', script: 'explain', argv: ['httproute/r7', '-n', NS] },
      { label: 'explain gateway', script: 'explain', argv: ['gateway/gw3', '-n', NS] },
      { label: 'explain trafficpolicy', script: 'explain', argv: ['trafficpolicy/pair4', '-n', NS] },
      { label: 'lab:status -A', script: 'lab-status', argv: ['-A'] },
      { label: 'lab:bundle', script: 'lab-bundle', argv: ['-o', join(out, 'bundle.tar.gz')] },
    ];
    const results: { label: string; runs: number[]; p50: number; max: number; exitCodes: number[]; note?: string }[] =
      [];
    const load0 = loadavg();
    for (const c of commands) {
      const runs: number[] = [];
      const codes: number[] = [];
      let last = '';
      for (let i = 0; i < RUNS; i++) {
        const r = await runTool(c.script, c.argv, up.kubeconfig, up.context);
        runs.push(r.ms);
        codes.push(r.code);
        last = r.out;
      }
      const note =
        c.script === 'lab-bundle'
          ? `archive ${Math.round(statSync(join(out, 'bundle.tar.gz')).size / 1024)} KiB`
          : undefined;
      results.push({
        label: c.label,
        runs,
        p50: nearestRank(runs, 50),
        max: Math.max(...runs),
        exitCodes: codes,
        ...(note ? { note } : {}),
      });
      log(
        `${c.label}: p50 ${Math.round(nearestRank(runs, 50))} ms, max ${Math.round(Math.max(...runs))} ms, exit ${[...new Set(codes)].join('/')}`,
      );
      if (codes.some((x) => x > 1)) log(`${c.label} failed:\n${last.slice(-2000)}`);
    }
    const load1 = loadavg();
    const report = {
      when: new Date().toISOString(),
      machine: { cpus: cpus().length, loadavg: { before: load0, after: load1 } },
      lab: { gateways: GATEWAYS, routes: ROUTES, policies: GATEWAYS + ROUTES / 2 },
      targetMs: TARGET_MS,
      results: results.map((r) => ({
        ...r,
        runs: r.runs.map(Math.round),
        p50: Math.round(r.p50),
        max: Math.round(r.max),
        meetsTarget: r.max < TARGET_MS,
      })),
    };
    const md = [
      `# bench:tools — ${report.when}`,
      '',
      `${GATEWAYS} Gateways, ${ROUTES} HTTPRoutes, ${report.lab.policies} TrafficPolicies; ${RUNS} runs per command, each a new process (load ${load0.map((x) => x.toFixed(2)).join(' ')}).`,
      '',
      '| command | p50 ms | max ms | target | exit codes |',
      '|---|---|---|---|---|',
      ...report.results.map(
        (r) =>
          `| ${r.label}${r.note ? ` (${r.note})` : ''} | ${r.p50} | ${r.max} | ${r.meetsTarget ? `< ${TARGET_MS} ✓` : `< ${TARGET_MS} ✗`} | ${[...new Set(r.exitCodes)].join('/')} |`,
      ),
    ].join('\n');
    writeReports({ 'tools.json': reportJson(report), 'tools.md': `${md}\n` });
    process.stdout.write(`${md}\n`);
    if (report.results.some((r) => r.exitCodes.some((c) => c > 1))) process.exitCode = 1;
  } finally {
    await labDown({ name: NAME, home, progress: new Progress({ quiet: true }) });
    removeTempDir(home);
    removeTempDir(out);
  }
}

await main();
