// bench:apiserver's watch fan-out: 50 watchers of one namespace, 200 writes at 20 ms intervals, latency from each
// write's send to each delivery (the server delivers events right after the commit, before it answers the write).
// First with the watchers in this process, with what else happened in the window collected to explain a tail
// (fanout-tail.ts); then with the watchers in a process of their own, as real watchers are.

import { spawn } from 'node:child_process';
import https from 'node:https';
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { cpuMs, cpuPressureUs, machineCpu, schedMs } from '../shared/proc.ts';
import { track } from '../shared/processes.ts';
import { progress } from '../shared/reports.ts';
import { explainFanoutTail, GC_KINDS, type GcPause, monoMs, type Sample, type Tail } from './fanout-tail.ts';
import type { ApiServer } from './server-process.ts';
import { TARGETS, WATCHERS, WRITES } from './settings.ts';
import { payload } from './writes-and-lists.ts';

const step = progress('apiserver');

/** The watchers of the separate-process run: prints `ready`, then `<name> <monotonic ms>` per delivery. */
const WATCHER_PROCESS = `
import https from 'node:https';
const { W_URL, W_TOKEN, W_CA, W_N } = process.env;
let ready = 0;
for (let w = 0; w < Number(W_N); w++) {
  const r = https.request(W_URL, { ca: W_CA, agent: false, headers: { Authorization: 'Bearer ' + W_TOKEN } }, (res) => {
    if (++ready === Number(W_N)) process.stdout.write('ready\\n');
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      const now = Number(process.hrtime.bigint()) / 1e6;
      buf += chunk;
      let nl = buf.indexOf('\\n');
      while (nl >= 0) {
        const m = /"name":"(fan2-\\d+)"/.exec(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\\n');
        if (m) process.stdout.write(m[1] + ' ' + now + '\\n');
      }
    });
    res.on('error', () => {});
  });
  r.on('error', () => {});
  r.end();
}
`;

export interface Fanout {
  fromSend: number[];
  spread: number[];
  writeLat: number[];
  serverUsPerDelivery: number;
  clientUsPerDelivery: number;
  tail: Tail;
}

/**
 * WATCHERS watch requests on namespace `fan` from `rv` in this process (node:https: llhttp parses in C, one data event
 * per chunk, like separate lightweight clients); `onEvent(name, now)` per delivered object. Resolves when all answered.
 */
async function watchInProcess(s: ApiServer, rv: string, onEvent: (name: string, now: number) => void) {
  const watchReqs: ReturnType<typeof https.request>[] = [];
  let ready = 0;
  const u = new URL(s.server);
  for (let w = 0; w < WATCHERS; w++) {
    const path = `/api/v1/namespaces/fan/configmaps?watch=true&resourceVersion=${rv}`;
    const headers = { Authorization: `Bearer ${s.token}` };
    const r = https.request({ host: u.hostname, port: u.port, path, ca: s.ca, agent: false, headers }, (res) => {
      ready++;
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now();
        buf += chunk;
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          nl = buf.indexOf('\n');
          const name = /"name":"(fan-\d+)"/.exec(line)?.[1];
          if (name) onEvent(name, now);
        }
      });
      res.on('error', () => {});
    });
    r.on('error', () => {});
    r.end();
    watchReqs.push(r);
  }
  while (ready < WATCHERS) await new Promise((r) => setTimeout(r, 10));
  return watchReqs;
}

/** GC pauses of this process, on the monotonic clock the server's preload uses. */
function benchGcRecorder(perfToMono: number) {
  const benchGc: GcPause[] = [];
  const toPause = (e: PerformanceEntry): GcPause => ({
    at: e.startTime + perfToMono,
    ms: e.duration,
    kind: GC_KINDS[(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? '?',
  });
  const benchObs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) benchGc.push(toPause(e));
  });
  benchObs.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      benchGc.push(...benchObs.takeRecords().map(toPause));
      benchObs.disconnect();
      return benchGc;
    },
  };
}

export async function fanoutInProcess(s: ApiServer): Promise<Fanout> {
  step('watch fan-out to 50 watchers');
  const sentAt = new Map<string, number>();
  const fromSend: number[] = [];
  const fanDeliveries: { name: string; ms: number }[] = [];
  const firstAt = new Map<string, number>();
  const spread: number[] = [];
  const rv = JSON.parse(await s.req('GET', '/api/v1/namespaces/fan/configmaps')).metadata.resourceVersion;
  const watchReqs = await watchInProcess(s, rv, (name, now) => {
    fromSend.push(now - sentAt.get(name)!);
    fanDeliveries.push({ name, ms: now - sentAt.get(name)! });
    const f = firstAt.get(name);
    if (f === undefined) firstAt.set(name, now);
    else spread.push(now - f);
  });
  const writeLat: number[] = [];
  // What else happened in the window, to explain a tail: GC pauses of the server (its preload) and of this process
  // (which parses the 50 streams), and before each write a /proc sample (CPU jiffies, runnable threads, CPU
  // pressure, run-queue waits of the server's and this process's main threads). Each sample is taken before the
  // write's clock starts, so the figures do not include it.
  const perfToMono = monoMs() - performance.now();
  const benchGc = benchGcRecorder(perfToMono);
  await s.diag('start');
  const samples: Sample[] = [];
  const sample = () =>
    samples.push({
      mono: monoMs(),
      stat: machineCpu(),
      pressureMs: (cpuPressureUs() ?? Number.NaN) / 1000,
      server: schedMs(s.child.pid!),
      bench: schedMs('self'),
    });
  const fanCpu0 = cpuMs(s.child.pid!);
  const fanClient0 = process.cpuUsage();
  const fanT0 = performance.now();
  for (let i = 0; i < WRITES; i++) {
    const name = `fan-${i}`;
    sample();
    const t = performance.now();
    sentAt.set(name, t);
    await s.req('POST', '/api/v1/namespaces/fan/configmaps', { ...payload(i), metadata: { name } });
    writeLat.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  const deadline = Date.now() + 10_000;
  while (fromSend.length < WATCHERS * WRITES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  sample();
  const fanWindowMs = performance.now() - fanT0;
  const fanServerCpuMs = cpuMs(s.child.pid!) - fanCpu0;
  const serverUsPerDelivery = (fanServerCpuMs * 1000) / Math.max(1, fromSend.length);
  const fc = process.cpuUsage(fanClient0);
  const clientUsPerDelivery = (fc.user + fc.system) / Math.max(1, fromSend.length);
  const serverDiag = await s.diag<{ gc: GcPause[]; eventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number } }>(
    'stop',
  );
  const benchGcPauses = benchGc.stop();
  for (const r of watchReqs) r.destroy();
  const tail = explainFanoutTail({
    target: TARGETS.watchP99Ms,
    sentAt: new Map([...sentAt].map(([n, t]) => [n, t + perfToMono])),
    deliveries: fanDeliveries,
    writeLatMs: writeLat,
    samples,
    serverGc: serverDiag.gc,
    benchGc: benchGcPauses,
    serverEventLoopDelay: serverDiag.eventLoopDelay,
    windowMs: fanWindowMs,
    serverCpuMs: fanServerCpuMs,
    benchCpuMs: (fc.user + fc.system) / 1000,
  });
  return { fromSend, spread, writeLat, serverUsPerDelivery, clientUsPerDelivery, tail };
}

/**
 * The same fan-out with the 50 watchers in a process of their own (as real watchers are: controllers, kubectl), so
 * the writer's event loop does not also decrypt and parse 50 streams. Times are CLOCK_MONOTONIC (process.hrtime),
 * which both processes share. Returns each delivery's latency from the write's send.
 */
export async function fanoutSeparateProcess(s: ApiServer): Promise<number[]> {
  step('watch fan-out to 50 watchers in a separate process');
  const rv2 = JSON.parse(await s.req('GET', '/api/v1/namespaces/fan2/configmaps')).metadata.resourceVersion;
  const watcherProc = track(
    spawn(process.execPath, ['--input-type=module', '-e', WATCHER_PROCESS], {
      env: {
        ...process.env,
        W_URL: `${s.server}/api/v1/namespaces/fan2/configmaps?watch=true&resourceVersion=${rv2}`,
        W_TOKEN: s.token,
        W_CA: s.ca,
        W_N: String(WATCHERS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const sep: number[] = [];
  const sentAt2 = new Map<string, number>();
  let procReady = false;
  let out = '';
  watcherProc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    let nl = out.indexOf('\n');
    while (nl >= 0) {
      const [name, at] = out.slice(0, nl).split(' ');
      out = out.slice(nl + 1);
      nl = out.indexOf('\n');
      if (name === 'ready') procReady = true;
      else if (sentAt2.has(name!)) sep.push(Number(at) - sentAt2.get(name!)!);
    }
  });
  while (!procReady) await new Promise((r) => setTimeout(r, 10));
  for (let i = 0; i < WRITES; i++) {
    const name = `fan2-${i}`;
    sentAt2.set(name, monoMs());
    await s.req('POST', '/api/v1/namespaces/fan2/configmaps', { ...payload(i), metadata: { name } });
    await new Promise((r) => setTimeout(r, 20));
  }
  const deadline2 = Date.now() + 10_000;
  while (sep.length < WATCHERS * WRITES && Date.now() < deadline2) await new Promise((r) => setTimeout(r, 20));
  watcherProc.kill('SIGTERM');
  return sep;
}
