// Why bench:apiserver's slowest watch deliveries were slow: GC pauses of the server and of the bench process, and
// run-queue waits of their main threads, laid against each slow write; with the machine's CPU figures over the window.
// Collected beside the figures, without changing what is measured.
import { cpus, loadavg } from 'node:os';
import type { machineCpu, schedMs } from '../shared/proc.ts';
import { percentile, round2 } from '../shared/stats.ts';

export interface GcPause {
  /** Start, CLOCK_MONOTONIC ms (process.hrtime), which every process on the machine shares. */
  at: number;
  ms: number;
  kind: string;
}
/** perf_hooks constants NODE_PERFORMANCE_GC_MINOR, _MAJOR, _INCREMENTAL, _WEAKCB. */
export const GC_KINDS: Record<number, string> = { 1: 'minor', 4: 'major', 8: 'incremental', 16: 'weakcb' };

/** A /proc sample taken before each write of the fan-out (and once after the last). */
export type Sample = {
  mono: number;
  stat: ReturnType<typeof machineCpu>;
  pressureMs: number;
  server: ReturnType<typeof schedMs>;
  bench: ReturnType<typeof schedMs>;
};

export const monoMs = () => Number(process.hrtime.bigint()) / 1e6;

function gcSummary(pauses: GcPause[]) {
  const byKind: Record<string, number> = {};
  for (const p of pauses) byKind[p.kind] = (byKind[p.kind] ?? 0) + 1;
  return {
    count: pauses.length,
    totalMs: round2(pauses.reduce((a, p) => a + p.ms, 0)),
    maxMs: round2(Math.max(0, ...pauses.map((p) => p.ms))),
    byKind,
  };
}

/** Milliseconds of `pauses` inside [from, to]. */
function overlapMs(pauses: GcPause[], from: number, to: number): number {
  let ms = 0;
  for (const p of pauses) ms += Math.max(0, Math.min(to, p.at + p.ms) - Math.max(from, p.at));
  return ms;
}

export type TailCause = 'server GC' | 'bench GC' | 'waiting for a CPU' | 'unexplained';
export const CAUSES: TailCause[] = ['server GC', 'bench GC', 'waiting for a CPU', 'unexplained'];

export interface FanoutWindow {
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
}

/** Run-queue waits between the last sample at or before `from` and the first at or after `to`. */
function runQueueWaits(S: Sample[], from: number, to: number) {
  let a = 0;
  while (a + 1 < S.length && S[a + 1]!.mono <= from) a++;
  let b = a;
  while (b + 1 < S.length && S[b]!.mono < to) b++;
  return { server: S[b]!.server.waitMs - S[a]!.server.waitMs, bench: S[b]!.bench.waitMs - S[a]!.bench.waitMs };
}

/** The machine over the window: cores busy (and by whom), steal, CPU pressure, runnable threads, load. */
function machineFigures(x: FanoutWindow) {
  const cores = cpus().length;
  const S = x.samples;
  const first = S[0]!;
  const last = S[S.length - 1]!;
  const spanMs = Math.max(1, last.mono - first.mono);
  const dTotal = Math.max(1, last.stat.total - first.stat.total);
  const busyCores =
    ((dTotal - (last.stat.idle - first.stat.idle) - (last.stat.steal - first.stat.steal)) / dTotal) * cores;
  const serverCores = x.serverCpuMs / x.windowMs;
  const benchCores = x.benchCpuMs / x.windowMs;
  const running = S.map((s) => s.stat.running);
  return {
    cores,
    busyCores: round2(busyCores),
    serverCores: round2(serverCores),
    benchCores: round2(benchCores),
    otherCores: round2(Math.max(0, busyCores - serverCores - benchCores)),
    stealPct: round2(((last.stat.steal - first.stat.steal) / dTotal) * 100),
    /** Share of the window in which some runnable thread on the machine waited for a CPU (PSI). */
    cpuPressurePct: round2(((last.pressureMs - first.pressureMs) / spanMs) * 100),
    runnableMean: round2(running.reduce((a, b) => a + b, 0) / running.length),
    samplesOverCoresPct: round2((running.filter((r) => r > cores).length / running.length) * 100),
    loadavg: loadavg().map(round2),
  };
}

/**
 * Why the slowest watch deliveries were slow. A delivery over the target belongs to a write (a late write makes all
 * its watchers late at once). For each such write, between its send and its slowest delivery:
 * - the server's GC pauses, and this process's (it parses the streams and timestamps the deliveries);
 * - how long the main threads of the server and of this process waited in the run queue for a CPU (schedstat,
 *   between the /proc samples around that interval, so it may include a few ms after it).
 * The write is put down to the largest of the three if it covers at least half its excess over the median
 * delivery, else it is unexplained.
 */
export function explainFanoutTail(x: FanoutWindow) {
  const p50 = percentile(
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
  const writes = [...perWrite]
    .filter(([, w]) => w.slow > 0)
    .map(([name, w]) => {
      const i = Number(name.slice('fan-'.length));
      const sent = x.sentAt.get(name)!;
      const serverGcMs = overlapMs(x.serverGc, sent, sent + w.max);
      const benchGcMs = overlapMs(x.benchGc, sent, sent + w.max);
      const wait = runQueueWaits(S, sent, sent + w.max);
      const excess = w.max - p50;
      const parts: [TailCause, number][] = [
        ['server GC', serverGcMs],
        ['bench GC', benchGcMs],
        ['waiting for a CPU', wait.server + wait.bench],
      ];
      const [top, ms] = parts.sort((a, b) => b[1] - a[1])[0]!;
      return {
        name,
        maxMs: round2(w.max),
        slowDeliveries: w.slow,
        writeRoundTripMs: round2(x.writeLatMs[i]!),
        serverGcMs: round2(serverGcMs),
        benchGcMs: round2(benchGcMs),
        serverRunQueueWaitMs: round2(wait.server),
        benchRunQueueWaitMs: round2(wait.bench),
        cause: ms >= excess / 2 ? top : ('unexplained' as TailCause),
      };
    })
    .sort((a, b) => b.maxMs - a.maxMs);
  const byCause = Object.fromEntries(CAUSES.map((c) => [c, 0])) as Record<TailCause, number>;
  for (const w of writes) byCause[w.cause] += w.slowDeliveries;
  // The same waits for every write, slow or not, as the base rate.
  const allWaits = [...perWrite.keys()].map((name) => {
    const sent = x.sentAt.get(name)!;
    const wt = runQueueWaits(S, sent, sent + perWrite.get(name)!.max);
    return wt.server + wt.bench;
  });
  const first = S[0]!;
  const last = S[S.length - 1]!;
  const slowDeliveries = writes.reduce((a, w) => a + w.slowDeliveries, 0);
  const dominant = slowDeliveries ? [...CAUSES].sort((a, b) => byCause[b] - byCause[a])[0] : undefined;
  return {
    p50Ms: round2(p50),
    slowDeliveries,
    slowWrites: writes.length,
    byCause,
    dominant,
    serverGc: gcSummary(x.serverGc),
    benchGc: gcSummary(x.benchGc),
    serverEventLoopDelay: x.serverEventLoopDelay,
    runQueueWait: {
      /** Server + this process, per write (send to slowest delivery). */
      allWritesP50Ms: round2(percentile(allWaits, 50)),
      slowWritesP50Ms: round2(
        percentile(
          writes.map((w) => w.serverRunQueueWaitMs + w.benchRunQueueWaitMs),
          50,
        ) ?? 0,
      ),
      serverTotalMs: round2(last.server.waitMs - first.server.waitMs),
      benchTotalMs: round2(last.bench.waitMs - first.bench.waitMs),
    },
    machine: machineFigures(x),
    writes: writes.slice(0, 20),
  };
}

export type Tail = ReturnType<typeof explainFanoutTail>;
