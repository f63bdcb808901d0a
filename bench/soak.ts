// `npm run bench:soak [-- --minutes 120] [--change-every 3] [--rps 5] [--sample-every 15]
//   [--sa-token-max-expiration <s>]`: a lab under low traffic for a long time (issue 17, "a lab lives for days").
// A throw-away embedded lab (its own GWLAB_HOME) with a Gateway, the sample app and a route; requests at --rps spread
// over every route; every --change-every minutes a change, alternately a new HTTPRoute and a TrafficPolicy edit whose
// effect (a response header) shows in responses. It records failed requests (time, status or error), change → status
// (Accepted / Attached written at the new generation) and change → effect (first response showing it), and each
// component's RSS and open file descriptors over time (the lab process by its pid; the control plane, proxy and sample
// app pods by their GWLAB_POD tags in /proc). With --sa-token-max-expiration the kubelet renews pod tokens every few
// seconds during the soak. Writes reports/bench/soak.json and soak.html (soak/report.ts), prints the acceptance
// checks, exits 1 when one fails. The lab is removed at the end, on an error, and on SIGINT/SIGTERM.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import minimist from 'minimist';
import { findTaggedProcesses } from '../lab/embedded/node/runtime/orphans.ts';
import { parseTokenExpiration } from '../lab/embedded/process.ts';
import { labDown, labUp } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { labPaths, readLabRecord } from '../lab/state.ts';
import { send } from '../lab/toolkit/http.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from '../scenarios/support/gateway.ts';
import {
  type Change,
  type Component,
  checks,
  type FailedRequest,
  passed,
  reportHtml,
  type Sample,
  type SoakResult,
  summaryText,
} from './soak/report.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (s: string) => process.stderr.write(`[bench:soak] ${new Date().toISOString().slice(11, 19)} ${s}\n`);
const NAME = 'soak';
const NS = 'soak';
const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const RECONCILE_TIMEOUT_MS = 120_000;
/** Pods of each component, by the GWLAB_POD tag (`<namespace>/<pod>`) of their processes. */
const POD_PREFIX: Record<Exclude<Component, 'lab process'>, string> = {
  'control plane': 'gwvendor-system/gwvendor-',
  proxy: `${NS}/gw-`,
  'sample app': `${NS}/sampleapp-`,
};

function options() {
  const a = minimist(process.argv.slice(2), {
    string: ['sa-token-max-expiration'],
    default: { minutes: 120, 'change-every': 3, rps: 5, 'sample-every': 15 },
  });
  const num = (flag: string, min: number) => {
    const v = Number(a[flag]);
    if (!Number.isFinite(v) || v < min) {
      console.error(`--${flag} ${a[flag]}: a number >= ${min}`);
      process.exit(2);
    }
    return v;
  };
  let ttl: number | undefined;
  if (a['sa-token-max-expiration'] !== undefined) {
    try {
      ttl = parseTokenExpiration(a['sa-token-max-expiration']);
    } catch (err) {
      console.error(`--sa-token-max-expiration: ${(err as Error).message}`);
      process.exit(2);
    }
  }
  return {
    minutes: num('minutes', 0.1),
    changeEveryMinutes: num('change-every', 0.1),
    rps: num('rps', 0.1),
    sampleEverySeconds: num('sample-every', 1),
    saTokenMaxExpiration: ttl,
  };
}

/** RSS (kB) and open descriptors of a process, or undefined when it is gone. */
function procStats(pid: number): { rssKb: number; fds: number } | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { rssKb: m ? Number(m[1]) : 0, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

function sample(t: number, labPid: number): Sample {
  const procs: Sample['procs'] = {};
  const add = (c: Component, pids: number[]) => {
    let rssKb = 0;
    let fds = 0;
    const alive: number[] = [];
    for (const pid of pids) {
      const s = procStats(pid);
      if (!s) continue;
      rssKb += s.rssKb;
      fds += s.fds;
      alive.push(pid);
    }
    if (alive.length) procs[c] = { rssKb, fds, pids: alive };
  };
  add('lab process', [labPid]);
  // Exec'd commands (probes, kubectl exec) are tagged too but are not the component.
  // Only this lab's pods (their run tag starts with its lab process's pid): another soak, or any lab named the same
  // under another GWLAB_HOME, must not add its processes to these figures.
  const tagged = findTaggedProcesses({ lab: NAME, labPid }).filter((p) => !p.container?.includes('.exec.'));
  for (const [c, prefix] of Object.entries(POD_PREFIX) as [Component, string][]) {
    add(
      c,
      tagged.filter((p) => p.pod?.startsWith(prefix)).map((p) => p.pid),
    );
  }
  return { t, procs };
}

const policy = (version: number) => `
apiVersion: ${VENDOR}
kind: TrafficPolicy
metadata: {name: soak, namespace: ${NS}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: base}]
  headerModifiers: {response: {set: [{name: x-soak-version, value: "v${version}"}]}}
`;

const route = (name: string, host: string) => `
apiVersion: ${GW_API}
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${NS}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`;

/** The soak's workload: Gateway, sample app, route `base` and its policy; returns the Gateway's URL once it serves. */
async function setUp(kube: Kube): Promise<string> {
  await kube.apply(namespaceWithGateway(NS));
  await kube.apply(sampleBackend(NS));
  await kube.apply(route('base', 'base.soak.example') + '---' + policy(0));
  await kube.waitForCondition(GW_API, 'Gateway', 'gw', NS, 'Programmed', { timeoutMs: 120_000 });
  await kube.waitForRollout('sampleapp', NS, { timeoutMs: 120_000 });
  const url = await gatewayUrl(kube, NS, 'gw', 8080);
  await waitFor(
    'the base route to answer with the policy header',
    async () => {
      const r = await send({ url, path: '/headers', host: 'base.soak.example', timeoutMs: 2000 });
      return { ok: r.status === 200 && r.headers['x-soak-version'] === 'v0', seen: r.status };
    },
    { timeoutMs: 120_000, intervalMs: 200 },
  );
  return url;
}

/** Requests at `rps`, round robin over `hosts` (which grows as routes are added), until `signal` aborts. */
function traffic(url: string, hosts: string[], rps: number, t0: number, signal: AbortSignal) {
  const failed: FailedRequest[] = [];
  const latencies: number[] = [];
  let total = 0;
  let next = 0;
  const inflight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    if (inflight.size >= 100) return; // never pile up: a stall shows as failures of the requests in flight
    const host = hosts[next++ % hosts.length];
    const t = (performance.now() - t0) / 1000;
    total++;
    const p = send({ url, path: '/headers', host, timeoutMs: 10_000 })
      .then((r) => {
        latencies.push(r.ms);
        if (r.status !== 200) failed.push({ t, host, status: r.status, error: r.body.slice(0, 200) });
      })
      .catch((err) => void failed.push({ t, host, status: 0, error: String((err as Error).message ?? err) }))
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }, 1000 / rps);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  return {
    failed,
    latencies,
    total: () => total,
    drain: () => Promise.all([...inflight]),
  };
}

/** Applies change `i` (odd: a new route, even: the policy's header value) and measures status and effect. */
async function change(kube: Kube, url: string, i: number, t: number, hosts: string[]): Promise<Change> {
  const kind = i % 2 ? 'route' : 'policy';
  const host = `r${i}.soak.example`;
  const what = kind === 'route' ? `HTTPRoute r${i} (${host})` : `TrafficPolicy soak: x-soak-version v${i}`;
  const c: Change = { i, kind, what, t };
  const start = performance.now();
  try {
    const [obj] = await kube.apply(kind === 'route' ? route(`r${i}`, host) : policy(i));
    const status = kind === 'route' ? 'Accepted' : 'Attached';
    const kindName = kind === 'route' ? 'HTTPRoute' : 'TrafficPolicy';
    const statusDone = kube
      .waitForCondition(kind === 'route' ? GW_API : VENDOR, kindName, obj.metadata!.name!, NS, status, {
        timeoutMs: RECONCILE_TIMEOUT_MS,
        intervalMs: 50,
      })
      .then(() => {
        c.statusMs = performance.now() - start;
      });
    const effectDone = waitFor(
      `the effect of change ${i}`,
      async () => {
        const r = await send({ url, path: '/headers', host: kind === 'route' ? host : 'base.soak.example' });
        const ok = kind === 'route' ? r.status === 200 : r.headers['x-soak-version'] === `v${i}`;
        return { ok, seen: `${r.status} ${r.headers['x-soak-version'] ?? ''}` };
      },
      { timeoutMs: RECONCILE_TIMEOUT_MS, intervalMs: 50 },
    ).then(() => {
      c.effectMs = performance.now() - start;
    });
    const results = await Promise.allSettled([statusDone, effectDone]);
    const errors = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason?.message ?? r.reason));
    if (errors.length) c.error = errors.join('; ');
    if (kind === 'route' && c.effectMs !== undefined) hosts.push(host);
  } catch (err) {
    c.error = String((err as Error).message ?? err);
  }
  log(
    `change ${i}: ${what}: status ${c.statusMs?.toFixed(0) ?? '-'} ms, effect ${c.effectMs?.toFixed(0) ?? '-'} ms${c.error ? ` (${c.error})` : ''}`,
  );
  return c;
}

/** Distinct tokens the control plane pod was given (its projected token file), polled every second. */
function watchControlPlaneToken(kube: Kube, home: string, signal: AbortSignal): () => number {
  const seen = new Set<string>();
  let file: string | undefined;
  const timer = setInterval(async () => {
    try {
      if (!file) {
        const [pod] = await kube.list('v1', 'Pod', 'gwvendor-system', 'app.orch.io/name=gwvendor');
        file = join(labPaths(NAME, home).pods, pod.metadata!.uid!, 'volumes', 'kube-api-access-gwlab', 'token');
      }
      seen.add(readFileSync(file, 'utf8'));
    } catch {
      file = undefined; // the pod was replaced: find the new one
    }
  }, 1000);
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  return () => Math.max(0, seen.size - 1);
}

/** Requests refused with 401 since `since` (ISO), from the API server's request log and its rotated copy. */
function refused401(home: string, since: string): number {
  const audit = labPaths(NAME, home).auditLog;
  let n = 0;
  for (const f of [`${audit}.1`, audit]) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (line.includes('"code":401') && JSON.parse(line).ts >= since) n++;
    }
  }
  return n;
}

async function restarts(kube: Kube): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of await kube.list('v1', 'Pod')) {
    const n = (p.status?.containerStatuses ?? []).reduce((s: number, c: any) => s + (c.restartCount ?? 0), 0);
    out[`${p.metadata!.namespace}/${p.metadata!.name}`] = n;
  }
  return out;
}

function pct(a: number[], p: number): number {
  if (!a.length) return 0;
  const s = [...a].sort((x, y) => x - y);
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]);
}

async function soak(home: string, o: ReturnType<typeof options>, stop: AbortSignal): Promise<SoakResult> {
  const load0 = loadavg();
  log(`lab:up (GWLAB_HOME=${home}; if this process is killed: GWLAB_HOME=${home} npm run lab:down -- --name ${NAME})`);
  const up = await labUp({
    name: NAME,
    home,
    backend: 'embedded',
    progress: new Progress({ quiet: true }),
    saTokenMaxExpirationSeconds: o.saTokenMaxExpiration,
  });
  const kube = Kube.fromFile(up.kubeconfig, up.context);
  const url = await setUp(kube);
  const labPid = readLabRecord(NAME, home)!.pid!;
  log(`soaking for ${o.minutes} min: ${o.rps} req/s through ${url}, a change every ${o.changeEveryMinutes} min`);
  const since = new Date().toISOString();
  const t0 = performance.now();
  const end = t0 + o.minutes * 60_000;
  const done = new AbortController();
  const signal = AbortSignal.any([done.signal, stop]);
  const hosts = ['base.soak.example'];
  const load = traffic(url, hosts, o.rps, t0, signal);
  const renewals = watchControlPlaneToken(kube, home, signal);
  const samples: Sample[] = [sample(0, labPid)];
  const sampler = setInterval(() => {
    samples.push(sample((performance.now() - t0) / 1000, labPid));
    const last = samples.at(-1)!;
    if (samples.length % 20 === 0) {
      const mb = Object.entries(last.procs).map(([c, p]) => `${c} ${(p!.rssKb / 1024).toFixed(0)} MB`);
      log(`${(last.t / 60).toFixed(1)} min: ${load.total()} requests, ${load.failed.length} failed; ${mb.join(', ')}`);
    }
  }, o.sampleEverySeconds * 1000);
  const changes: Change[] = [];
  for (let i = 1; !signal.aborted; i++) {
    const at = t0 + i * o.changeEveryMinutes * 60_000;
    if (at > end - 30_000) break; // no change whose reconcile could not be seen before the end
    await sleep(Math.max(0, at - performance.now()), undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    changes.push(await change(kube, url, i, (performance.now() - t0) / 1000, hosts));
  }
  await sleep(Math.max(0, end - performance.now()), undefined, { signal }).catch(() => undefined);
  const elapsed = (performance.now() - t0) / 1000;
  samples.push(sample(elapsed, labPid));
  done.abort();
  clearInterval(sampler);
  await load.drain();
  return {
    date: new Date().toISOString(),
    minutes: o.minutes,
    options: {
      rps: o.rps,
      changeEveryMinutes: o.changeEveryMinutes,
      sampleEverySeconds: o.sampleEverySeconds,
      ...(o.saTokenMaxExpiration ? { saTokenMaxExpiration: o.saTokenMaxExpiration } : {}),
    },
    machine: { cpus: cpus().length, loadavgBefore: load0, loadavgAfter: loadavg() },
    elapsed,
    interrupted: stop.aborted,
    requests: {
      total: load.total(),
      failed: load.failed,
      latencyMs: { p50: pct(load.latencies, 50), p99: pct(load.latencies, 99), max: pct(load.latencies, 100) },
    },
    changes,
    samples,
    tokenRenewals: renewals(),
    refused401: refused401(home, since),
    restarts: await restarts(kube),
  };
}

async function main(): Promise<number> {
  const o = options();
  const home = mkdtempSync(join(tmpdir(), 'gwlab-bench-soak-'));
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (sig: string) => {
    signals++;
    log(`${sig}: stopping${signals > 1 ? ' now' : '; writing what was measured and removing the lab'}`);
    stop.abort();
    if (signals > 1) {
      void labDown({ name: NAME, home, progress: new Progress({ quiet: true }) })
        .catch(() => undefined)
        .finally(() => {
          rmSync(home, { recursive: true, force: true });
          process.exit(130);
        });
    }
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  try {
    const r = await soak(home, o, stop.signal);
    const cs = checks(r);
    const dir = join(root, 'reports', 'bench');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'soak.json'), JSON.stringify({ ...r, checks: cs }, null, 2) + '\n');
    writeFileSync(join(dir, 'soak.html'), reportHtml(r, cs));
    process.stdout.write(`${summaryText(r, cs)}\nreport: ${join(dir, 'soak.html')}\n`);
    return r.interrupted ? 130 : passed(cs) ? 0 : 1;
  } finally {
    log('removing the lab');
    await labDown({ name: NAME, home, progress: new Progress({ quiet: true }) }).catch((err) =>
      log(`lab:down failed: ${err}; GWLAB_HOME=${home} npm run lab:down -- --name ${NAME}`),
    );
    rmSync(home, { recursive: true, force: true });
  }
}

process.exitCode = await main();
