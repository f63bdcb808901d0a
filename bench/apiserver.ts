// `npm run bench:apiserver`: the embedded API server's figures from issue 2, measured against a server in its own
// process (as in a lab) with durability on (SQLite WAL, every write in the log before it is acknowledged):
// creates/s with 16 concurrent clients (~1 KB ConfigMaps), list latency at 1,000 and 10,000 objects, watch fan-out
// latency to 50 watchers, resident memory holding 10,000 objects; plus the per-request cost of the client paths
// (client-node over HTTPS vs raw HTTPS vs an in-process call), which decided how controllers talk to the server.
// Where a target is missed, the report says why and what would close it, from data collected alongside the figures
// (the server's GC pauses, event-loop delay and memory through a preload in its process; this process's GC pauses;
// CPU use, run-queue waits, CPU pressure and steal from /proc), without changing what is measured.
// Writes reports/bench/apiserver.json and apiserver.md.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { Core } from '../lab/embedded/apiserver/core.ts';
import { ResourceRegistry } from '../lab/embedded/apiserver/resources.ts';
import { Store } from '../lab/embedded/apiserver/store.ts';
import { loadModelValidators } from '../lab/embedded/apiserver/validation.ts';
import { labPaths } from '../lab/state.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TARGETS = { createsPerSec: 2000, list1kMs: 20, watchP99Ms: 10, rssMb10k: 300 };
const CLIENTS = 16;
const TOTAL = Number(process.env.BENCH_OBJECTS ?? 10_000);
const step = (s: string) => process.stderr.write(`[bench:apiserver] ${s}\n`);

function pct(a: number[], p: number): number {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const r2 = (n: number) => Math.round(n * 100) / 100;

function payload(i: number) {
  // ~1 KB serialized: 900 bytes of data plus metadata.
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, labels: { bench: 'yes', shard: String(i % 10) } },
    data: { payload: 'x'.repeat(900) },
  };
}

/** CPU time (user + system, ms) a process has used, from /proc. */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Machine-wide CPU jiffies (/proc/stat `cpu` line) and the number of runnable threads at this instant. */
function procStat(): { total: number; idle: number; steal: number; running: number } {
  const text = readFileSync('/proc/stat', 'utf8');
  const f = text.slice(0, text.indexOf('\n')).trim().split(/\s+/).slice(1, 9).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return {
    total: user + nice + system + idle + iowait + irq + softirq + steal,
    idle: idle + iowait,
    steal,
    running: Number(/procs_running (\d+)/.exec(text)?.[1] ?? 0),
  };
}

/**
 * CPU time and run-queue wait (ms) of a process's main thread (/proc/<pid>/schedstat): the wait is the time it was
 * runnable while another thread had the CPU, i.e. how long it waited to be scheduled.
 */
function schedMs(pid: number | 'self'): { runMs: number; waitMs: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { runMs: run / 1e6, waitMs: wait / 1e6 };
}

/** Machine-wide time (ms) in which some runnable thread waited for a CPU (PSI, /proc/pressure/cpu); NaN without. */
function cpuPressureMs(): number {
  try {
    return Number(/some .*total=(\d+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]) / 1000;
  } catch {
    return Number.NaN;
  }
}

const monoMs = () => Number(process.hrtime.bigint()) / 1e6;

interface GcPause {
  /** Start, CLOCK_MONOTONIC ms (process.hrtime), which every process on the machine shares. */
  at: number;
  ms: number;
  kind: string;
}
/** perf_hooks constants NODE_PERFORMANCE_GC_MINOR, _MAJOR, _INCREMENTAL, _WEAKCB. */
const GC_KINDS: Record<number, string> = { 1: 'minor', 4: 'major', 8: 'incremental', 16: 'weakcb' };

/**
 * Loaded into the server process with --import: reports its GC pauses (PerformanceObserver 'gc'), event-loop delay
 * (monitorEventLoopDelay at its default 10-ms sampling, so it adds ~100 cheap timer wake-ups a second; reported as
 * the lateness beyond those 10 ms) and process.memoryUsage() over the IPC channel, only between 'start' and 'stop',
 * so the figures outside those windows run without it. Nothing of the server is changed.
 */
const SERVER_DIAG = `
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
const toMono = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const KINDS = ${JSON.stringify(GC_KINDS)};
let gc = [];
const take = (list) => { for (const e of list) gc.push({ at: e.startTime + toMono, ms: e.duration, kind: KINDS[e.detail?.kind] ?? String(e.detail?.kind) }); };
const obs = new PerformanceObserver((l) => take(l.getEntries()));
const eld = monitorEventLoopDelay();
process.on('message', (m) => {
  if (m?.diag === 'start') {
    gc = [];
    obs.observe({ entryTypes: ['gc'] });
    eld.reset();
    eld.enable();
    process.send({ diag: 'start' });
  } else if (m?.diag === 'stop') {
    take(obs.takeRecords());
    obs.disconnect();
    eld.disable();
    // Each value is the time between two of the histogram's 10-ms timer wake-ups: the delay is what exceeds 10 ms.
    const ms = (ns) => Math.max(0, Math.round((ns - 10e6) / 1e4) / 100);
    process.send({ diag: 'stop', gc, eventLoopDelay: { p50Ms: ms(eld.percentile(50)), p99Ms: ms(eld.percentile(99)), maxMs: ms(eld.max) } });
  } else if (m?.diag === 'memory') process.send({ diag: 'memory', memory: process.memoryUsage() });
});
process.channel?.unref();
`;

type Sample = {
  mono: number;
  stat: ReturnType<typeof procStat>;
  pressureMs: number;
  server: ReturnType<typeof schedMs>;
  bench: ReturnType<typeof schedMs>;
};

function gcSummary(pauses: GcPause[]) {
  const byKind: Record<string, number> = {};
  for (const p of pauses) byKind[p.kind] = (byKind[p.kind] ?? 0) + 1;
  return {
    count: pauses.length,
    totalMs: r2(pauses.reduce((a, p) => a + p.ms, 0)),
    maxMs: r2(Math.max(0, ...pauses.map((p) => p.ms))),
    byKind,
  };
}

/** Milliseconds of `pauses` inside [from, to]. */
function overlapMs(pauses: GcPause[], from: number, to: number): number {
  let ms = 0;
  for (const p of pauses) ms += Math.max(0, Math.min(to, p.at + p.ms) - Math.max(from, p.at));
  return ms;
}

type TailCause = 'server GC' | 'bench GC' | 'waiting for a CPU' | 'unexplained';
const CAUSES: TailCause[] = ['server GC', 'bench GC', 'waiting for a CPU', 'unexplained'];

/**
 * Why the slowest watch deliveries were slow. A delivery over the target belongs to a write (a late write makes all
 * its watchers late at once). For each such write, between its send and its slowest delivery:
 * - the server's GC pauses, and this process's (it parses the streams and timestamps the deliveries);
 * - how long the main threads of the server and of this process waited in the run queue for a CPU (schedstat,
 *   between the /proc samples around that interval, so it may include a few ms after it).
 * The write is put down to the largest of the three if it covers at least half its excess over the median
 * delivery, else it is unexplained.
 */
function explainFanoutTail(x: {
  target: number;
  sentAt: Map<string, number>;
  deliveries: { name: string; ms: number }[];
  writeLatMs: number[];
  samples: Sample[];
  serverGc: GcPause[];
  benchGc: GcPause[];
  serverEventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number };
  windowMs: number;
  serverCpuMs: number;
  benchCpuMs: number;
}) {
  const cores = cpus().length;
  const p50 = pct(
    x.deliveries.map((d) => d.ms),
    50,
  );
  const perWrite = new Map<string, { max: number; slow: number }>();
  for (const d of x.deliveries) {
    const w = perWrite.get(d.name) ?? { max: 0, slow: 0 };
    w.max = Math.max(w.max, d.ms);
    if (d.ms > x.target) w.slow++;
    perWrite.set(d.name, w);
  }
  const S = x.samples;
  /** Run-queue waits between the last sample at or before `from` and the first at or after `to`. */
  const waits = (from: number, to: number) => {
    let a = 0;
    while (a + 1 < S.length && S[a + 1].mono <= from) a++;
    let b = a;
    while (b + 1 < S.length && S[b].mono < to) b++;
    return { server: S[b].server.waitMs - S[a].server.waitMs, bench: S[b].bench.waitMs - S[a].bench.waitMs };
  };
  const writes = [...perWrite]
    .filter(([, w]) => w.slow > 0)
    .map(([name, w]) => {
      const i = Number(name.slice('fan-'.length));
      const sent = x.sentAt.get(name)!;
      const serverGcMs = overlapMs(x.serverGc, sent, sent + w.max);
      const benchGcMs = overlapMs(x.benchGc, sent, sent + w.max);
      const wait = waits(sent, sent + w.max);
      const excess = w.max - p50;
      const parts: [TailCause, number][] = [
        ['server GC', serverGcMs],
        ['bench GC', benchGcMs],
        ['waiting for a CPU', wait.server + wait.bench],
      ];
      const [top, ms] = parts.sort((a, b) => b[1] - a[1])[0];
      return {
        name,
        maxMs: r2(w.max),
        slowDeliveries: w.slow,
        writeRoundTripMs: r2(x.writeLatMs[i]),
        serverGcMs: r2(serverGcMs),
        benchGcMs: r2(benchGcMs),
        serverRunQueueWaitMs: r2(wait.server),
        benchRunQueueWaitMs: r2(wait.bench),
        cause: ms >= excess / 2 ? top : ('unexplained' as TailCause),
      };
    })
    .sort((a, b) => b.maxMs - a.maxMs);
  const byCause = Object.fromEntries(CAUSES.map((c) => [c, 0])) as Record<TailCause, number>;
  for (const w of writes) byCause[w.cause] += w.slowDeliveries;
  // The same waits for every write, slow or not, as the base rate.
  const allWaits = [...perWrite.keys()].map((name) => {
    const sent = x.sentAt.get(name)!;
    const wt = waits(sent, sent + perWrite.get(name)!.max);
    return wt.server + wt.bench;
  });
  const first = S[0];
  const last = S[S.length - 1];
  const spanMs = Math.max(1, last.mono - first.mono);
  const dTotal = Math.max(1, last.stat.total - first.stat.total);
  const busyCores =
    ((dTotal - (last.stat.idle - first.stat.idle) - (last.stat.steal - first.stat.steal)) / dTotal) * cores;
  const serverCores = x.serverCpuMs / x.windowMs;
  const benchCores = x.benchCpuMs / x.windowMs;
  const running = S.map((s) => s.stat.running);
  const slowDeliveries = writes.reduce((a, w) => a + w.slowDeliveries, 0);
  const dominant = slowDeliveries ? [...CAUSES].sort((a, b) => byCause[b] - byCause[a])[0] : undefined;
  return {
    p50Ms: r2(p50),
    slowDeliveries,
    slowWrites: writes.length,
    byCause,
    dominant,
    serverGc: gcSummary(x.serverGc),
    benchGc: gcSummary(x.benchGc),
    serverEventLoopDelay: x.serverEventLoopDelay,
    runQueueWait: {
      /** Server + this process, per write (send to slowest delivery). */
      allWritesP50Ms: r2(pct(allWaits, 50)),
      slowWritesP50Ms: r2(
        pct(
          writes.map((w) => w.serverRunQueueWaitMs + w.benchRunQueueWaitMs),
          50,
        ) ?? 0,
      ),
      serverTotalMs: r2(last.server.waitMs - first.server.waitMs),
      benchTotalMs: r2(last.bench.waitMs - first.bench.waitMs),
    },
    machine: {
      cores,
      busyCores: r2(busyCores),
      serverCores: r2(serverCores),
      benchCores: r2(benchCores),
      otherCores: r2(Math.max(0, busyCores - serverCores - benchCores)),
      stealPct: r2(((last.stat.steal - first.stat.steal) / dTotal) * 100),
      /** Share of the window in which some runnable thread on the machine waited for a CPU (PSI). */
      cpuPressurePct: r2(((last.pressureMs - first.pressureMs) / spanMs) * 100),
      runnableMean: r2(running.reduce((a, b) => a + b, 0) / running.length),
      samplesOverCoresPct: r2((running.filter((r) => r > cores).length / running.length) * 100),
      loadavg: loadavg().map(r2),
    },
    writes: writes.slice(0, 20),
  };
}

type Tail = ReturnType<typeof explainFanoutTail>;

/** The note for the watch p99 target: which cause the tail comes from, in the data above, and what would close it. */
function watchNote(t: Tail, p99: number, total: number, writes: number, serverUsPerDelivery: number, sepP99: number) {
  const m = t.machine;
  const facts =
    `p99 ${p99} ms (p50 ${t.p50Ms} ms): ${t.slowDeliveries} of ${total} deliveries, from ${t.slowWrites} of ` +
    `${writes} writes, took over ${TARGETS.watchP99Ms} ms (a late write makes all its watchers late). ` +
    `GC in the window: the server paused ${t.serverGc.count} times (${t.serverGc.totalMs} ms in all, longest ` +
    `${t.serverGc.maxMs} ms), this process (it parses the 50 streams and timestamps the deliveries) ` +
    `${t.benchGc.count} times (${t.benchGc.totalMs} ms, longest ${t.benchGc.maxMs} ms). Waiting for a CPU: from ` +
    `send to slowest delivery the main threads of the server and of this process spent a median ` +
    `${t.runQueueWait.slowWritesP50Ms} ms in the run queue for the slow writes against ${t.runQueueWait.allWritesP50Ms} ` +
    `ms for all writes; the server's event loop ran late by up to ${t.serverEventLoopDelay.maxMs} ms (p99 ` +
    `${t.serverEventLoopDelay.p99Ms} ms) while it used ${m.serverCores} of a core. Machine: ${m.busyCores} of ` +
    `${m.cores} cores busy (server ${m.serverCores}, this process ${m.benchCores}, other processes ${m.otherCores}), ` +
    `some thread waiting for a CPU ${Number.isNaN(m.cpuPressurePct) ? '(no PSI here)' : `${m.cpuPressurePct}% of the time`}, ` +
    `steal ${m.stealPct}%, load ${m.loadavg.join(' ')}. Slow deliveries by cause: ` +
    `${CAUSES.map((c) => `${c} ${t.byCause[c]}`).join(', ')}.`;
  const perWriteMs = r2((serverUsPerDelivery * 50) / 1000);
  const verdict: Record<TailCause, string> = {
    'waiting for a CPU':
      ' So the tail is scheduling noise, not GC: the slow writes waited for a CPU on a machine shared with other ' +
      `work. The server's own cost is ${serverUsPerDelivery} µs per delivery (~${perWriteMs} ms of CPU per write to ` +
      '50 watchers), well inside the target. What would close it: cores that the server and the watchers do not ' +
      'share with other work (an idle machine, or more cores than the benchmark keeps busy); no server change ' +
      'shortens a wait for the CPU.',
    'server GC':
      " So the tail comes from the server's GC pauses. What would close it: fewer allocations per write and per " +
      'delivery on the server (the pauses are the young-generation scavenges the write path fills), or a larger ' +
      'young generation (node --max-semi-space-size) so that they come less often.',
    'bench GC':
      ' So the tail comes from GC in the measuring process, not in the server. What would close it: watchers that ' +
      'allocate less per event, or timestamps taken in a process of their own (the separate-process figure, p99 ' +
      `${sepP99} ms, is that measurement, with its own noise on 2 cores).`,
    unexplained:
      " Neither GC nor waiting for a CPU covers most of the slow writes' delay. What would close it: a finer trace " +
      'of those writes (timestamps inside the server at commit and at each socket write) to find where they wait.',
  };
  return facts + (t.dominant ? verdict[t.dominant] : '');
}

/** The watchers of step 4b, as a process of their own: prints `ready`, then `<name> <monotonic ms>` per delivery. */
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

async function main() {
  const load0 = loadavg();
  const home = mkdtempSync(join(tmpdir(), 'gwlab-bench-'));
  // BENCH_CPU_PROF=<dir> writes a CPU profile of the server process there.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const diagFile = join(home, 'server-diag.mjs');
  writeFileSync(diagFile, SERVER_DIAG);
  const child = spawn(
    process.execPath,
    [
      ...prof,
      '--import',
      pathToFileURL(diagFile).href,
      join(root, 'lab/embedded/apiserver/main.ts'),
      '--name',
      'bench',
      '--no-controllers',
      '--log-level',
      'warn',
    ],
    {
      env: { ...process.env, GWLAB_HOME: home },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  /** One request to the server's diagnostics preload (SERVER_DIAG) and its answer. */
  const diag = <T>(what: 'start' | 'stop' | 'memory') =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: any) => {
        if (m?.diag !== what) return;
        child.off('message', onMessage);
        resolve(m as T);
      };
      child.on('message', onMessage);
      child.send({ diag: what }, (e) => e && reject(e));
    });
  const stopChild = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', stopChild);
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('KUBECONFIG=') && resolve());
      child.once('exit', (c) => reject(new Error(`server exited with ${c}`)));
    });
    const kcPath = labPaths('bench', home).kubeconfig;
    const kcText = readFileSync(kcPath, 'utf8');
    const server = /server: (\S+)/.exec(kcText)![1];
    const token = /token: (\S+)/.exec(kcText)![1];
    const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(kcText)![1], 'base64').toString();
    const agent = new Agent({ connect: { ca }, connections: 64, pipelining: 1 });
    // undici's request() (not fetch(), whose WHATWG layer costs more than the server's work per create).
    const req = async (method: 'GET' | 'POST', path: string, body?: unknown, accept?: string) => {
      const r = await request(server + path, {
        method,
        dispatcher: agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(accept ? { accept } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await r.body.text();
      if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 200)}`);
      return text;
    };
    for (const ns of ['bench', 'small', 'fan', 'fan2'])
      await req('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

    // 1. Creates with 16 concurrent clients.
    step(`creating ${TOTAL} ConfigMaps (~1 KB) with ${CLIENTS} concurrent clients`);
    const sizeBytes = JSON.stringify(payload(0)).length;
    let next = 0;
    const lat: number[] = [];
    const serverCpu0 = cpuMs(child.pid!);
    const clientCpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < TOTAL) {
          const i = next++;
          const s = performance.now();
          await req('POST', '/api/v1/namespaces/bench/configmaps', payload(i));
          lat.push(performance.now() - s);
        }
      }),
    );
    const createSec = (performance.now() - t0) / 1000;
    const serverUsPerCreate = ((cpuMs(child.pid!) - serverCpu0) * 1000) / TOTAL;
    const cc = process.cpuUsage(clientCpu0);
    const clientUsPerCreate = (cc.user + cc.system) / TOTAL;
    const createsPerSec = TOTAL / createSec;
    step(`${Math.round(createsPerSec)} creates/s`);

    // 2. Memory holding 10,000 objects (after a GC-friendly pause).
    await new Promise((r) => setTimeout(r, 1000));
    const rss10k = rssMb(child.pid!);
    const mem10k = (await diag<{ memory: NodeJS.MemoryUsage }>('memory')).memory;

    // 3. List latency at 10,000 and 1,000 objects.
    const listTimes = async (path: string, n: number, accept?: string) => {
      const out: number[] = [];
      await req('GET', path, undefined, accept);
      for (let i = 0; i < n; i++) {
        const s = performance.now();
        await req('GET', path, undefined, accept);
        out.push(performance.now() - s);
      }
      return out;
    };
    step('list latency at 10,000 objects');
    const list10k = await listTimes('/api/v1/namespaces/bench/configmaps', 10);
    step('creating 1,000 more for the 1,000-object list');
    next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < 1000) {
          const i = next++;
          await req('POST', '/api/v1/namespaces/small/configmaps', payload(i));
        }
      }),
    );
    const listCpu0 = cpuMs(child.pid!);
    const list1k = await listTimes('/api/v1/namespaces/small/configmaps', 30);
    // Server CPU per 1,000-object list (31 lists: the warm-up one too).
    const listServerCpuMs = (cpuMs(child.pid!) - listCpu0) / 31;
    const table1k = await listTimes(
      '/api/v1/namespaces/small/configmaps?limit=500',
      30,
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    );

    // 4. Watch fan-out: 50 watchers, 200 writes at 20 ms intervals; latency from the write's send to each delivery
    // (the server delivers events right after the commit, before it answers the write).
    step('watch fan-out to 50 watchers');
    const WATCHERS = 50;
    const WRITES = 200;
    const sentAt = new Map<string, number>();
    const fromSend: number[] = [];
    const fanDeliveries: { name: string; ms: number }[] = [];
    // Watchers use node:https (llhttp parses in C; one data event per chunk), like separate lightweight clients.
    const firstAt = new Map<string, number>();
    const spread: number[] = [];
    const watchReqs: ReturnType<typeof https.request>[] = [];
    let ready = 0;
    const rv = JSON.parse(await req('GET', '/api/v1/namespaces/fan/configmaps')).metadata.resourceVersion;
    const u = new URL(server);
    for (let w = 0; w < WATCHERS; w++) {
      const r = https.request(
        {
          host: u.hostname,
          port: u.port,
          path: `/api/v1/namespaces/fan/configmaps?watch=true&resourceVersion=${rv}`,
          ca,
          agent: false,
          headers: { Authorization: `Bearer ${token}` },
        },
        (res) => {
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
              if (!name) continue;
              fromSend.push(now - sentAt.get(name)!);
              fanDeliveries.push({ name, ms: now - sentAt.get(name)! });
              const f = firstAt.get(name);
              if (f === undefined) firstAt.set(name, now);
              else spread.push(now - f);
            }
          });
          res.on('error', () => {});
        },
      );
      r.on('error', () => {});
      r.end();
      watchReqs.push(r);
    }
    while (ready < WATCHERS) await new Promise((r) => setTimeout(r, 10));
    const writeLat: number[] = [];
    // What else happened in the window, to explain a tail: GC pauses of the server (its preload) and of this process
    // (which parses the 50 streams), and before each write a /proc sample (CPU jiffies, runnable threads, CPU
    // pressure, run-queue waits of the server's and this process's main threads). Each sample is taken before the
    // write's clock starts, so the figures do not include it.
    const perfToMono = monoMs() - performance.now();
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
    await diag('start');
    const samples: Sample[] = [];
    const sample = () =>
      samples.push({
        mono: monoMs(),
        stat: procStat(),
        pressureMs: cpuPressureMs(),
        server: schedMs(child.pid!),
        bench: schedMs('self'),
      });
    const fanCpu0 = cpuMs(child.pid!);
    const fanClient0 = process.cpuUsage();
    const fanT0 = performance.now();
    for (let i = 0; i < WRITES; i++) {
      const name = `fan-${i}`;
      sample();
      const t = performance.now();
      sentAt.set(name, t);
      await req('POST', '/api/v1/namespaces/fan/configmaps', { ...payload(i), metadata: { name } });
      writeLat.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
    const deadline = Date.now() + 10_000;
    while (fromSend.length < WATCHERS * WRITES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    sample();
    const fanWindowMs = performance.now() - fanT0;
    const fanServerCpuMs = cpuMs(child.pid!) - fanCpu0;
    const serverUsPerDelivery = (fanServerCpuMs * 1000) / Math.max(1, fromSend.length);
    const fc = process.cpuUsage(fanClient0);
    const clientUsPerDelivery = (fc.user + fc.system) / Math.max(1, fromSend.length);
    const serverDiag = await diag<{ gc: GcPause[]; eventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number } }>(
      'stop',
    );
    benchGc.push(...benchObs.takeRecords().map(toPause));
    benchObs.disconnect();
    for (const r of watchReqs) r.destroy();
    const tail = explainFanoutTail({
      target: TARGETS.watchP99Ms,
      sentAt: new Map([...sentAt].map(([n, t]) => [n, t + perfToMono])),
      deliveries: fanDeliveries,
      writeLatMs: writeLat,
      samples,
      serverGc: serverDiag.gc,
      benchGc,
      serverEventLoopDelay: serverDiag.eventLoopDelay,
      windowMs: fanWindowMs,
      serverCpuMs: fanServerCpuMs,
      benchCpuMs: (fc.user + fc.system) / 1000,
    });

    // 4b. The same fan-out with the 50 watchers in a process of their own (as real watchers are: controllers, kubectl),
    // so the writer's event loop does not also decrypt and parse 50 streams. Times are CLOCK_MONOTONIC
    // (process.hrtime), which both processes share. The target is checked on the figure above.
    step('watch fan-out to 50 watchers in a separate process');
    const rv2 = JSON.parse(await req('GET', '/api/v1/namespaces/fan2/configmaps')).metadata.resourceVersion;
    const watcherProc = spawn(process.execPath, ['--input-type=module', '-e', WATCHER_PROCESS], {
      env: {
        ...process.env,
        W_URL: `${server}/api/v1/namespaces/fan2/configmaps?watch=true&resourceVersion=${rv2}`,
        W_TOKEN: token,
        W_CA: ca,
        W_N: String(WATCHERS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
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
        else if (sentAt2.has(name)) sep.push(Number(at) - sentAt2.get(name)!);
      }
    });
    while (!procReady) await new Promise((r) => setTimeout(r, 10));
    for (let i = 0; i < WRITES; i++) {
      const name = `fan2-${i}`;
      sentAt2.set(name, monoMs());
      await req('POST', '/api/v1/namespaces/fan2/configmaps', { ...payload(i), metadata: { name } });
      await new Promise((r) => setTimeout(r, 20));
    }
    const deadline2 = Date.now() + 10_000;
    while (sep.length < WATCHERS * WRITES && Date.now() < deadline2) await new Promise((r) => setTimeout(r, 20));
    watcherProc.kill('SIGTERM');

    // 5. Client paths: client-node over HTTPS, raw HTTPS, in-process core (the same verb code without HTTP).
    step('client path cost (GET of one ConfigMap)');
    const kc = new KubeConfig();
    kc.loadFromFile(kcPath);
    const api = kc.makeApiClient(CoreV1Api);
    const N = 500;
    const timeIt = async (fn: () => Promise<unknown> | unknown) => {
      for (let i = 0; i < 20; i++) await fn();
      const s = performance.now();
      for (let i = 0; i < N; i++) await fn();
      return ((performance.now() - s) / N) * 1000;
    };
    const clientNodeUs = await timeIt(() => api.readNamespacedConfigMap({ namespace: 'small', name: 'cm-1' }));
    const rawUs = await timeIt(() => req('GET', '/api/v1/namespaces/small/configmaps/cm-1'));
    await loadModelValidators();
    const memStore = new Store();
    const core = new Core(memStore, new ResourceRegistry());
    const nsRt = core.registry.get('', 'v1', 'namespaces')!;
    const cmRt = core.registry.get('', 'v1', 'configmaps')!;
    const wo = { dryRun: false, fieldValidation: 'Strict' as const, warnings: [], defaultManager: 'bench' };
    core.create(nsRt, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'small' } }, wo);
    core.create(cmRt, 'small', payload(1), wo);
    const inProcUs = await timeIt(() => JSON.stringify(core.get(cmRt, 'small', 'cm-1')));
    await agent.close().catch(() => {});

    const load1 = loadavg();
    const result = {
      when: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      load: { before: load0.map(r2), after: load1.map(r2), uptime: readFileSync('/proc/loadavg', 'utf8').trim() },
      setup: {
        server: 'separate process, HTTPS, SQLite WAL (synchronous=NORMAL), request log on',
        clients: CLIENTS,
        objectBytes: sizeBytes,
        objects: TOTAL,
      },
      creates: {
        perSecond: Math.round(createsPerSec),
        seconds: r2(createSec),
        p50Ms: r2(pct(lat, 50)),
        p99Ms: r2(pct(lat, 99)),
        serverCpuUsPerCreate: Math.round(serverUsPerCreate),
        clientCpuUsPerCreate: Math.round(clientUsPerCreate),
      },
      list: {
        objects1k: { p50Ms: r2(pct(list1k, 50)), p99Ms: r2(pct(list1k, 99)) },
        objects10k: { p50Ms: r2(pct(list10k, 50)), p99Ms: r2(pct(list10k, 99)) },
        table1kFirstPage500: { p50Ms: r2(pct(table1k, 50)) },
      },
      watchFanout: {
        watchers: WATCHERS,
        writes: WRITES,
        delivered: fromSend.length,
        fromSendP50Ms: r2(pct(fromSend, 50)),
        fromSendP99Ms: r2(pct(fromSend, 99)),
        spreadP99Ms: r2(pct(spread, 99)),
        serverCpuUsPerDelivery: Math.round(serverUsPerDelivery),
        clientCpuUsPerDelivery: Math.round(clientUsPerDelivery),
        writeP50Ms: r2(pct(writeLat, 50)),
        separateProcess: { delivered: sep.length, p50Ms: r2(pct(sep, 50)), p99Ms: r2(pct(sep, 99)) },
      },
      memory: { rssMbHolding10k: r2(rss10k) },
      clientPath: {
        clientNodeHttpsUs: Math.round(clientNodeUs),
        rawHttpsUs: Math.round(rawUs),
        inProcessUs: Math.round(inProcUs),
      },
      targets: TARGETS,
      met: {
        creates: createsPerSec >= TARGETS.createsPerSec,
        list1k: pct(list1k, 50) < TARGETS.list1kMs,
        watchP99: pct(fromSend, 99) < TARGETS.watchP99Ms,
        memory: rss10k < TARGETS.rssMb10k,
      },
      /** What was collected to explain a miss (the figures above do not depend on it). */
      diagnostics: {
        list1kServerCpuMs: r2(listServerCpuMs),
        memory: Object.fromEntries(Object.entries(mem10k).map(([k, v]) => [`${k}Mb`, r2(v / 1024 / 1024)])),
        watchFanout: tail,
      },
      notes: {} as Partial<Record<'creates' | 'list1k' | 'watchP99' | 'memory', string>>,
    };
    const load = `load ${result.load.after.join(' ')} on ${result.machine.cpus} cores`;
    if (!result.met.creates) {
      const alone = Math.round(1e6 / result.creates.serverCpuUsPerCreate);
      result.notes.creates =
        `${result.creates.perSecond} creates/s with ${CLIENTS} clients. The server used ${result.creates.serverCpuUsPerCreate} ` +
        `µs of CPU per create (~${alone}/s on one core) and the benchmark client ${result.creates.clientCpuUsPerCreate} µs, ` +
        `on cores shared with other work (${load}). ` +
        (alone >= TARGETS.createsPerSec
          ? 'The server alone has the capacity: the miss is the client and other processes competing for the same ' +
            'cores, and a machine where the server has a core to itself would close it.'
          : `The server's own cost per create is above the ${Math.round(1e6 / TARGETS.createsPerSec)} µs the target ` +
            'allows on one core: the write path must get cheaper (BENCH_CPU_PROF=<dir> profiles the server).');
    }
    if (!result.met.list1k) {
      result.notes.list1k =
        `p50 ${result.list.objects1k.p50Ms} ms for 1,000 objects of ${sizeBytes} bytes; the server spent ` +
        `${r2(listServerCpuMs)} ms of CPU per list (${load}). ` +
        (listServerCpuMs < TARGETS.list1kMs
          ? "The server's own work fits the target: the rest is the transfer and waiting for a CPU, which a machine " +
            'without other work would close.'
          : "The server's own work per list exceeds the target. It already sends each object's JSON cached at write " +
            'time, in 256-KB writes, so what is left is walking the objects, joining the strings and TLS encryption: ' +
            'a CPU profile of the server (BENCH_CPU_PROF=<dir>) shows which of them to make cheaper.');
    }
    if (!result.met.watchP99)
      result.notes.watchP99 = watchNote(
        tail,
        result.watchFanout.fromSendP99Ms,
        WATCHERS * WRITES,
        WRITES,
        result.watchFanout.serverCpuUsPerDelivery,
        result.watchFanout.separateProcess.p99Ms,
      );
    if (!result.met.memory) {
      const mb = result.diagnostics.memory as Record<string, number>;
      result.notes.memory =
        `RSS ${result.memory.rssMbHolding10k} MB holding 10,000 objects: V8 heap used ${mb.heapUsedMb} MB of ` +
        `${mb.heapTotalMb} MB, external ${mb.externalMb} MB (the rest is code, SQLite's page cache and TLS). ` +
        (mb.heapTotalMb > result.memory.rssMbHolding10k / 2
          ? 'The heap dominates: each object is held twice, parsed and as its JSON (cached at write time for get, ' +
            'list and watch); holding one form is the first candidate, and a heap snapshot of the server (node ' +
            '--heapsnapshot-signal) shows which retainers are largest.'
          : "The heap is not the main part: SQLite's cache (PRAGMA cache_size) and native buffers are where to look.");
    }
    const outDir = join(root, 'reports', 'bench');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'apiserver.json'), `${JSON.stringify(result, null, 2)}\n`);
    const ok = (b: boolean) => (b ? 'met' : 'MISSED');
    const md = [
      '# bench:apiserver',
      '',
      `${result.when} · ${result.machine.cpus} × ${result.machine.model} · Node ${result.machine.node}`,
      `Machine load (1/5/15 min) before: ${result.load.before.join(' ')}, after: ${result.load.after.join(' ')} — other work on the machine skews these figures.`,
      `Setup: ${result.setup.server}; ${CLIENTS} concurrent clients; ConfigMaps of ${sizeBytes} bytes.`,
      '',
      '| figure | value | target | |',
      '|---|---|---|---|',
      `| creates/s (${CLIENTS} clients, durable) | ${result.creates.perSecond} (p50 ${result.creates.p50Ms} ms, p99 ${result.creates.p99Ms} ms) | ≥ ${TARGETS.createsPerSec} | ${ok(result.met.creates)} |`,
      `| CPU per create: server / benchmark client | ${result.creates.serverCpuUsPerCreate} / ${result.creates.clientCpuUsPerCreate} µs (server alone could do ~${Math.round(1e6 / result.creates.serverCpuUsPerCreate)}/s on one core) | | |`,
      `| list 1,000 objects (JSON) | p50 ${result.list.objects1k.p50Ms} ms, p99 ${result.list.objects1k.p99Ms} ms | < ${TARGETS.list1kMs} ms | ${ok(result.met.list1k)} |`,
      `| list 10,000 objects (JSON) | p50 ${result.list.objects10k.p50Ms} ms, p99 ${result.list.objects10k.p99Ms} ms | | |`,
      `| kubectl get page (Table, 500 of 1,000) | p50 ${result.list.table1kFirstPage500.p50Ms} ms | | |`,
      `| watch fan-out, ${WATCHERS} watchers (from write sent) | p50 ${result.watchFanout.fromSendP50Ms} ms, p99 ${result.watchFanout.fromSendP99Ms} ms (${result.watchFanout.delivered}/${WATCHERS * WRITES} delivered) | p99 < ${TARGETS.watchP99Ms} ms | ${ok(result.met.watchP99)} |`,
      `| fan-out spread (first to each later watcher) / the write's own round trip | p99 ${result.watchFanout.spreadP99Ms} ms / p50 ${result.watchFanout.writeP50Ms} ms | | |`,
      `| watch fan-out, ${WATCHERS} watchers in a separate process (from write sent) | p50 ${result.watchFanout.separateProcess.p50Ms} ms, p99 ${result.watchFanout.separateProcess.p99Ms} ms (${result.watchFanout.separateProcess.delivered}/${WATCHERS * WRITES} delivered) | | |`,
      `| CPU per delivered event: server / watchers | ${result.watchFanout.serverCpuUsPerDelivery} / ${result.watchFanout.clientCpuUsPerDelivery} µs | | |`,
      `| RSS holding 10,000 objects | ${result.memory.rssMbHolding10k} MB | < ${TARGETS.rssMb10k} MB | ${ok(result.met.memory)} |`,
      `| GET one object: client-node / raw HTTPS / in-process | ${result.clientPath.clientNodeHttpsUs} / ${result.clientPath.rawHttpsUs} / ${result.clientPath.inProcessUs} µs | | |`,
      '',
      // The watch p99 swings from run to run on a shared machine: say what its tail was made of, met or not.
      ...(tail.slowDeliveries
        ? [
            `Watch fan-out tail: ${tail.slowDeliveries} deliveries from ${tail.slowWrites} writes over ` +
              `${TARGETS.watchP99Ms} ms; by cause: ${CAUSES.map((c) => `${c} ${tail.byCause[c]}`).join(', ')} ` +
              `(server GC pauses ${tail.serverGc.count}, run-queue wait per slow write p50 ` +
              `${tail.runQueueWait.slowWritesP50Ms} ms against ${tail.runQueueWait.allWritesP50Ms} ms for all writes).`,
            '',
          ]
        : []),
      ...(Object.keys(result.notes).length
        ? [
            '## Missed targets: why, and what would close them',
            '',
            ...Object.entries(result.notes).flatMap(([k, v]) => [`- **${k}**: ${v}`, '']),
            'The data behind these notes is under `diagnostics` in apiserver.json.',
            '',
          ]
        : ['Every target met.', '']),
    ].join('\n');
    writeFileSync(join(outDir, 'apiserver.md'), md);
    process.stdout.write(`${md}\n`);
  } finally {
    stopChild();
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
