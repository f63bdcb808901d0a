// bench:proxy's open-loop load generator, run in a process of its own (`node bench/proxy.ts --load ...`, started by
// open-loop-run.ts): `rate` req/s over CONNECTIONS keep-alive connections for `warmupS` unmeasured seconds, then
// `seconds` measured, latency taken from each request's due time.
//
// Why it is built this way (measured on this 2-CPU machine): the first generator (an undici Pool of 50 connections in
// a fresh process, latency from the moment a request was handed to the pool, a separate 1 s "warm-up" process) put a
// p99 of 84-93 ms on every path, direct included. That p99 was the generator's. Against the sample app alone at
// 3263 req/s (two 10 s runs, CPU pressure 14-16%): p99 36-40 ms, and 87% of the requests over 10 ms were in the
// process's first second (cold JIT, connections opened lazily in the middle of the load, a young heap growing
// through frequent scavenges, and the backlog of all that draining); without that second the p99 was 4.6-4.9 ms.
// The rest were its own GC (21 collections in 10 s, up to 22 ms; 40-60 ms when the machine was busy) and the
// machine's stalls (an idle process on this machine sees its event loop stall 13-18 ms at that load, 40-180 ms when
// other tenants run tests). Under the same conditions this generator measured p99 2.2-3.6 ms from the due time,
// GC at most 1.8-4.9 ms.
// So this generator
//   - opens all its connections and sends one request on each before the clock starts, then runs at the target rate
//     for a warm-up that is not measured (JIT, heap and the servers' connections settle), in the same process;
//   - is a small HTTP/1.1 keep-alive client on net.Socket with one pre-encoded request, so that it allocates little
//     per request and its own GC pauses stay short;
//   - schedules request i at its own due time t0 + i/rate and measures its latency from that due time (the standard
//     correction for coordinated omission: a request delayed because the path was slow, or because the generator
//     was late, counts the delay), spread round-robin over the connections as wrk2 does (a request whose connection is
//     still busy waits for it, and that wait counts);
//   - reports its own share: the send lag (actual write − due time), its event-loop delay
//     (perf_hooks.monitorEventLoopDelay) and GC pauses during the measured window, next to the latencies, so a
//     p99 that comes from the generator or the machine shows as such instead of being charged to a path.
// It prints `load-window-start` and `load-window-end` lines so that the parent samples the servers (CPU, RSS) over
// exactly the measured window, then `load-result <JSON>`.
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { type Quantiles, quantiles, round2, round3 } from '../shared/stats.ts';
import { responseParser } from './response-parser.ts';
import { CONNECTIONS, HOST } from './settings.ts';
import { ELD_RESOLUTION_MS, loopDelayMs } from './window.ts';

export interface OpenLoop {
  rate: number;
  warmupS: number;
  seconds: number;
  /** Requests in the measured window, and those that failed (connection error or a status other than 200). */
  requests: number;
  errors: number;
  /** Completed requests over the measured window's wall time. */
  achievedRate: number;
  /** From each request's due time to its last response byte (corrected for coordinated omission): the figure used. */
  latency: Quantiles;
  /** From the actual write to the last response byte (what a closed-loop client would report). */
  service: Quantiles;
  /** Actual write − due time: the generator's lateness (timer granularity, its own pauses, a busy connection). */
  sendLag: Quantiles;
  generator: {
    eventLoopDelayMs: { p50: number; p99: number; max: number };
    gc: { count: number; totalMs: number; maxMs: number };
    /** The generator's CPU over the window, in % of one core, and per request. */
    cpuPct: number;
    cpuUsPerRequest: number;
  };
}

interface Conn {
  sock: net.Socket;
  ready: boolean;
  /** The request on the wire: its index, -1 none, -2 the unmeasured first one. */
  inflight: number;
  waiting: number[];
  warmed?: () => void;
}

/** The schedule of one run: request i is due at t0 + i·interval; when each was written and answered, and how. */
class Schedule {
  readonly port: number;
  readonly request: Buffer;
  readonly interval: number;
  readonly warmN: number;
  readonly total: number;
  readonly wrote: Float64Array;
  readonly done: Float64Array;
  readonly failed: Uint8Array;
  completed = 0;
  t0 = 0;
  /** When the measured window began (the due time of its first request). */
  windowAt = 0;
  private finish: () => void = () => {};
  readonly allDone = new Promise<void>((resolve) => {
    this.finish = resolve;
  });

  constructor(port: number, request: Buffer, rate: number, warmupS: number, seconds: number) {
    this.port = port;
    this.request = request;
    this.interval = 1000 / rate;
    this.warmN = Math.round(rate * warmupS);
    this.total = this.warmN + Math.round(rate * seconds);
    this.wrote = new Float64Array(this.total);
    this.done = new Float64Array(this.total);
    this.failed = new Uint8Array(this.total);
  }

  write(c: Conn, i: number): void {
    c.inflight = i;
    this.wrote[i] = performance.now();
    c.sock.write(this.request);
  }

  complete(i: number, ok: boolean): void {
    if (this.done[i] !== 0) return;
    this.done[i] = performance.now();
    if (!ok) this.failed[i] = 1;
    if (++this.completed === this.total) this.finish();
  }

  /** Connects `c`; a connection lost mid-run fails what it held and is replaced. */
  open(c: Conn): Promise<void> {
    return new Promise((resolve, reject) => {
      const sock = net.connect({ host: '127.0.0.1', port: this.port, noDelay: true });
      c.sock = sock;
      c.ready = false;
      const parse = responseParser((status) => {
        const i = c.inflight;
        c.inflight = -1;
        if (i >= 0) this.complete(i, status === 200);
        else if (i === -2) c.warmed?.();
        const next = c.waiting.shift();
        if (next !== undefined) this.write(c, next);
      });
      sock.on('data', parse);
      sock.once('connect', () => {
        c.ready = true;
        const next = c.waiting.shift();
        if (next !== undefined) this.write(c, next);
        resolve();
      });
      sock.on('error', reject);
      sock.once('close', () => {
        // A connection lost mid-run: what it held failed; a new one takes its place.
        if (c.sock !== sock || this.t0 === 0) return;
        if (c.inflight >= 0) this.complete(c.inflight, false);
        c.inflight = -1;
        for (const i of c.waiting.splice(0)) this.complete(i, false);
        if (this.completed < this.total) this.open(c).catch(() => {});
      });
    });
  }

  /** Starts the clock and hands each request to its connection at its due time; `onWindow` at the first measured. */
  run(conns: Conn[], onWindow: () => void): void {
    this.t0 = performance.now();
    let next = 0;
    const pump = () => {
      const now = performance.now();
      while (next < this.total && this.t0 + next * this.interval <= now) {
        if (next === this.warmN) {
          this.windowAt = this.t0 + this.warmN * this.interval;
          onWindow();
        }
        const c = conns[next % conns.length]!;
        if (c.ready && c.inflight === -1 && c.waiting.length === 0) this.write(c, next);
        else c.waiting.push(next);
        next++;
      }
      if (next < this.total) setTimeout(pump, Math.max(0, this.t0 + next * this.interval - performance.now()));
    };
    pump();
  }
}

/** Opens CONNECTIONS connections and sends one unmeasured request on each, before the clock starts. */
async function openConnections(s: Schedule): Promise<Conn[]> {
  const conns: Conn[] = Array.from({ length: CONNECTIONS }, () => ({
    sock: undefined as unknown as net.Socket,
    ready: false,
    inflight: -1,
    waiting: [] as number[],
  }));
  await Promise.all(conns.map((c) => s.open(c)));
  await Promise.all(
    conns.map(
      (c) =>
        new Promise<void>((resolve) => {
          c.warmed = resolve;
          c.inflight = -2;
          c.sock.write(s.request);
        }),
    ),
  );
  return conns;
}

/** The generator's own event-loop delay and GC pauses, from the measured window's start. */
function selfProbes() {
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  const gcs: Array<{ at: number; ms: number }> = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ at: e.startTime, ms: e.duration });
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  let cpu0 = process.cpuUsage();
  return {
    startWindow() {
      eld.enable();
      eld.reset();
      cpu0 = process.cpuUsage();
    },
    stop(windowAt: number) {
      const cpu = process.cpuUsage(cpu0);
      eld.disable();
      gcObserver.disconnect();
      const inWindow = gcs.filter((g) => g.at >= windowAt);
      return {
        cpuUs: cpu.user + cpu.system,
        eventLoopDelayMs: {
          p50: loopDelayMs(eld.percentile(50)),
          p99: loopDelayMs(eld.percentile(99)),
          max: loopDelayMs(eld.max),
        },
        gc: {
          count: inWindow.length,
          totalMs: round3(inWindow.reduce((a, g) => a + g.ms, 0)),
          maxMs: round3(inWindow.reduce((a, g) => Math.max(a, g.ms), 0)),
        },
      };
    },
  };
}

/**
 * Latency, service time and send lag of each measured request that did not fail; with `rawPath`, each one's due time
 * (ms since the epoch, comparable across processes) and latency go there as Float64 pairs, for quantiles pooled over
 * the rounds and for placing slow requests against machine stalls (see fixed-rate.ts).
 */
function latencies(s: Schedule, rawPath: string | undefined) {
  const n = s.total - s.warmN;
  const lat = new Float64Array(n);
  const svc = new Float64Array(n);
  const lag = new Float64Array(n);
  let errors = 0;
  let k = 0;
  for (let i = s.warmN; i < s.total; i++) {
    if (s.failed[i]) {
      errors++;
      continue;
    }
    const due = s.t0 + i * s.interval;
    lat[k] = s.done[i]! - due;
    svc[k] = s.done[i]! - s.wrote[i]!;
    lag[k] = s.wrote[i]! - due;
    k++;
  }
  if (rawPath) {
    const pairs = new Float64Array(2 * k);
    let j = 0;
    for (let i = s.warmN; i < s.total; i++) {
      if (s.failed[i]) continue;
      pairs[2 * j] = performance.timeOrigin + s.t0 + i * s.interval;
      pairs[2 * j + 1] = lat[j]!;
      j++;
    }
    writeFileSync(rawPath, pairs);
  }
  return {
    n,
    errors,
    latency: quantiles(lat.subarray(0, k)),
    service: quantiles(svc.subarray(0, k)),
    sendLag: quantiles(lag.subarray(0, k)),
  };
}

export async function openLoop(
  port: number,
  path: string,
  rate: number,
  warmupS: number,
  seconds: number,
  rawPath?: string,
): Promise<OpenLoop> {
  const s = new Schedule(
    port,
    Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`, 'latin1'),
    rate,
    warmupS,
    seconds,
  );
  const conns = await openConnections(s);
  const probes = selfProbes();
  s.run(conns, () => {
    probes.startWindow();
    process.stdout.write('load-window-start\n');
  });
  // A path that stops answering must not hang the bench: 30 s after the last due time, what is left has failed.
  const deadline = setTimeout(
    () => {
      for (let i = 0; i < s.total; i++) if (s.done[i] === 0) s.complete(i, false);
    },
    (warmupS + seconds) * 1000 + 30_000,
  );
  await s.allDone;
  clearTimeout(deadline);
  let lastDone = s.windowAt;
  for (let i = s.warmN; i < s.total; i++) lastDone = Math.max(lastDone, s.done[i]!);
  const windowMs = lastDone - s.windowAt;
  const self = probes.stop(s.windowAt);
  process.stdout.write('load-window-end\n');
  for (const c of conns) c.sock.destroy();
  const { n, errors, latency, service, sendLag } = latencies(s, rawPath);
  return {
    rate,
    warmupS,
    seconds,
    requests: n,
    errors,
    achievedRate: Math.round(((n - errors) * 1000) / windowMs),
    latency,
    service,
    sendLag,
    generator: {
      eventLoopDelayMs: self.eventLoopDelayMs,
      gc: self.gc,
      cpuPct: Math.round((self.cpuUs / 1000 / windowMs) * 100),
      cpuUsPerRequest: round2(self.cpuUs / n),
    },
  };
}
