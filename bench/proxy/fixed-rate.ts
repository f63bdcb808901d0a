// bench:proxy's fixed-rate phase: every path at the same open-loop rate, in interleaved rounds (each path once per
// round, in a rotated order), latency from each request's due time pooled over every request of every round. One
// 10 s window per path put each path's figure at the mercy of whatever the machine did during that window: the same
// proxy measured p99 8.6, 10.0, 12.5 and 13.3 ms in consecutive windows on a quiet machine, with direct between 4.4
// and 6.4 ms (slow requests come in a few bursts of 10-35 ms, when the machine stalls every process at once: an idle
// probe process stalled 2-13 ms in the same bursts). Rounds give every path the same exposure to such bursts, and
// pooling keeps every request (nothing is dropped or averaged away). The stalls of the idle bench process are recorded
// meanwhile, to show how many of each path's slowest requests fall in them (stalls.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { progress } from '../shared/reports.ts';
import { mean, median, type Quantiles, quantiles, round2, round3 } from '../shared/stats.ts';
import { openLoopRun, type SampledOpenLoop } from './open-loop-run.ts';
import type { Servers } from './servers.ts';
import { DURATION, FIXED_ROUNDS, FIXED_WARMUP_S } from './settings.ts';
import { type Stall, slowRequestsInStalls, stallRecorder } from './stalls.ts';
import { fmtCpu } from './window.ts';

const step = progress('proxy');

/** One round of the fixed-rate phase: every path once, in `order`. */
export interface FixedRound {
  round: number;
  order: string[];
  runs: Record<string, SampledOpenLoop>;
  addedP99Ms: number;
  bareAddedP99Ms: number;
}

/** A path's fixed-rate figures over all rounds: latency pooled over every request, the rest per round. */
export interface FixedSummary {
  /** Quantiles of every measured request of every round together. */
  latency: Quantiles;
  requests: number;
  errors: number;
  achievedRate: number;
  /** Per-round p99s, in round order. */
  roundP99Ms: number[];
  serviceP99MedianMs: number;
  sendLagP99MedianMs: number;
  generatorLoopDelayMaxMs: number;
  generatorGcMaxMs: number;
  idleStallMaxMs: number;
  cpuPressurePct: number | null;
  /** Mean over the rounds, per process. */
  cpuUsPerRequest: Record<string, number>;
}

export type SlowVsStalls = ReturnType<typeof slowRequestsInStalls>;

export interface FixedRate {
  rounds: FixedRound[];
  /** Per path. */
  fixed: Record<string, FixedSummary>;
  stallList: Stall[];
  slowVsStalls: Record<string, SlowVsStalls>;
}

/** `requestsAt`: per round, (due time, latency) pairs as the generator wrote them. */
function summarizeRounds(name: string, rounds: FixedRound[], requestsAt: Float64Array[]): FixedSummary {
  const runs = rounds.map((r) => r.runs[name]!);
  const all = new Float64Array(requestsAt.reduce((n, l) => n + l.length / 2, 0));
  let at = 0;
  for (const pairs of requestsAt) for (let i = 1; i < pairs.length; i += 2) all[at++] = pairs[i]!;
  const pressures = runs.map((r) => r.window.cpuPressurePct).filter((x): x is number => x !== null);
  const procs = Object.keys(runs[0]!.window.cpuUsPerRequest);
  return {
    latency: quantiles(all),
    requests: runs.reduce((n, r) => n + r.requests, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    achievedRate: Math.round(mean(runs.map((r) => r.achievedRate))),
    roundP99Ms: runs.map((r) => r.latency.p99),
    serviceP99MedianMs: round3(median(runs.map((r) => r.service.p99))),
    sendLagP99MedianMs: round3(median(runs.map((r) => r.sendLag.p99))),
    generatorLoopDelayMaxMs: Math.max(...runs.map((r) => r.generator.eventLoopDelayMs.max)),
    generatorGcMaxMs: Math.max(...runs.map((r) => r.generator.gc.maxMs)),
    idleStallMaxMs: Math.max(...runs.map((r) => r.window.idleLoopDelayMaxMs)),
    cpuPressurePct: pressures.length > 0 ? round2(mean(pressures)) : null,
    cpuUsPerRequest: Object.fromEntries(
      [...procs, 'generator'].map((p) => [p, round2(mean(runs.map((r) => r.window.cpuUsPerRequest[p] ?? 0)))]),
    ),
  };
}

/** One round: every path once in a rotated order; each run's raw latencies are kept in `requestsAt`. */
async function runRound(
  servers: Servers,
  rate: number,
  r: number,
  dir: string,
  requestsAt: Record<string, Float64Array[]>,
): Promise<FixedRound> {
  const { paths } = servers;
  const order = paths.map((_, i) => paths[(i + r) % paths.length]!);
  const runs: Record<string, SampledOpenLoop> = {};
  for (const p of order) {
    const raw = join(dir, `latency-${p.name}-${r}.f64`);
    const f = await openLoopRun(p.port, p.path, rate, FIXED_WARMUP_S, DURATION, servers.serversOf[p.name]!, {}, raw);
    const b = readFileSync(raw);
    requestsAt[p.name]!.push(new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)));
    runs[p.name] = f;
    step(
      `  round ${r + 1} ${p.name}: p50 ${f.latency.p50} ms p99 ${f.latency.p99} ms p99.9 ${f.latency.p999} ms (service p99 ${f.service.p99}, send lag p99 ${f.sendLag.p99}), errors ${f.errors}, achieved ${f.achievedRate} req/s; generator loop delay max ${f.generator.eventLoopDelayMs.max} ms, GC max ${f.generator.gc.maxMs} ms; idle stall ${f.window.idleLoopDelayMaxMs} ms; CPU pressure ${f.window.cpuPressurePct}%; CPU µs/request ${fmtCpu(f.window)}`,
    );
  }
  const round: FixedRound = {
    round: r + 1,
    order: order.map((p) => p.name),
    runs,
    addedP99Ms: round2(runs.proxy!.latency.p99 - runs.direct!.latency.p99),
    bareAddedP99Ms: round2(runs.bare!.latency.p99 - runs.direct!.latency.p99),
  };
  step(`  round ${r + 1}: p99 added by the proxy ${round.addedP99Ms} ms, by the bare proxy ${round.bareAddedP99Ms} ms`);
  return round;
}

/** FIXED_ROUNDS rounds at `rate` (`why` says how it was chosen); latency files go to `dir`. */
export async function fixedRatePhase(servers: Servers, rate: number, why: string, dir: string): Promise<FixedRate> {
  const { paths } = servers;
  step(
    `fixed rate: ${rate} req/s (${why}); ${FIXED_ROUNDS} rounds, each path ${FIXED_WARMUP_S} s warm-up + ${DURATION} s per round, in a rotated order`,
  );
  const rounds: FixedRound[] = [];
  const requestsAt: Record<string, Float64Array[]> = Object.fromEntries(paths.map((p) => [p.name, []]));
  const stalls = stallRecorder();
  for (let r = 0; r < FIXED_ROUNDS; r++) rounds.push(await runRound(servers, rate, r, dir, requestsAt));
  const stallList = stalls.stop();
  const fixed: Record<string, FixedSummary> = Object.fromEntries(
    paths.map((p) => [p.name, summarizeRounds(p.name, rounds, requestsAt[p.name]!)]),
  );
  const slowVsStalls = Object.fromEntries(
    paths.map((p) => [p.name, slowRequestsInStalls(requestsAt[p.name]!, fixed[p.name]!.latency.p99, stallList)]),
  );
  for (const [n, x] of Object.entries(slowVsStalls))
    step(
      `  ${n}: ${x.slowInStallPct}% of the requests at or above its p99 were due in a stall window, against ${x.allInStallPct}% of all its requests`,
    );
  return { rounds, fixed, stallList, slowVsStalls };
}
