// bench:proxy's report: the figures of every phase gathered into reports/bench/proxy.json (its keys are what people
// compare between runs: keep them), the targets of issue 4 checked, and the same as Markdown (proxy.md).
import { cpus } from 'node:os';
import { median, round2 } from '../shared/stats.ts';
import { type AccessLogResult, accessLogChecks, accessLogSection } from './access-log.ts';
import type { PathThroughput } from './closed-loop.ts';
import type { FixedRate } from './fixed-rate.ts';
import type { SampledOpenLoop } from './open-loop-run.ts';
import type { FixedRateChoice } from './probe.ts';
import type { Protocols } from './protocols.ts';
import type { ApplyTime, LookupCost } from './route-config.ts';
import {
  APP_PATH,
  CONNECTIONS,
  DURATION,
  FIXED_ROUNDS,
  FIXED_WARMUP_S,
  PROXY_PATH,
  SOAK,
  SOAK_WARMUP_S,
  TARGETS,
} from './settings.ts';
import type { SoakRss } from './soak.ts';
import { STALL_AFTER_MS, STALL_BEFORE_MS, STALL_MIN_MS, STALL_TICK_MS } from './stalls.ts';
import { fmtCpu } from './window.ts';

/** What the phases measured, and the load average around them. */
export interface Measured {
  load0: number[];
  load1: number[];
  throughput: Record<string, PathThroughput>;
  choice: FixedRateChoice;
  fixedRate: FixedRate;
  soak: SampledOpenLoop;
  soakRss: SoakRss;
  protocols: Protocols;
  accessLog: AccessLogResult;
  apply: ApplyTime;
  lookups: LookupCost[];
}

export type ProxyResult = ReturnType<typeof proxyResult>;
/** A target: what, whether it was met, the figure behind it. */
export type Check = [string, boolean, string];

export function proxyResult(m: Measured) {
  const { throughput, choice, soak, soakRss, apply, lookups } = m;
  const { rounds, fixed, stallList, slowVsStalls } = m.fixedRate;
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      node: process.version,
      loadBefore: m.load0.map(round2),
      loadAfter: m.load1.map(round2),
    },
    settings: {
      connections: CONNECTIONS,
      durationS: DURATION,
      soakS: SOAK,
      proxyPath: PROXY_PATH,
      appPath: APP_PATH,
      routes: 1000,
      virtualHosts: 50,
    },
    throughput,
    ratios: {
      proxyVsBare: round2(throughput.proxy!.rps / throughput.bare!.rps),
      proxyVsDirect: round2(throughput.proxy!.rps / throughput.direct!.rps),
      bareVsDirect: round2(throughput.bare!.rps / throughput.direct!.rps),
    },
    fixedRate: {
      rate: choice.rate,
      why: choice.why,
      closedLoopMax: choice.closedLoopMax,
      openLoopMax: choice.openLoopMax ?? null,
      probe: choice.probe,
      warmupS: FIXED_WARMUP_S,
      rounds,
      ...fixed,
      stalls: {
        tickMs: STALL_TICK_MS,
        minMs: STALL_MIN_MS,
        count: stallList.length,
        maxMs: stallList.reduce((mx, x) => Math.max(mx, x.ms), 0),
        windowMs: [-STALL_BEFORE_MS, STALL_AFTER_MS],
        slowVsStalls,
      },
      medianRoundAddedP99Ms: round2(median(rounds.map((r) => r.addedP99Ms))),
      medianRoundBareAddedP99Ms: round2(median(rounds.map((r) => r.bareAddedP99Ms))),
      addedP50Ms: round2(fixed.proxy!.latency.p50 - fixed.direct!.latency.p50),
      addedP99Ms: round2(fixed.proxy!.latency.p99 - fixed.direct!.latency.p99),
      bareAddedP50Ms: round2(fixed.bare!.latency.p50 - fixed.direct!.latency.p50),
      bareAddedP99Ms: round2(fixed.bare!.latency.p99 - fixed.direct!.latency.p99),
    },
    soak: {
      rate: choice.rate,
      warmupS: SOAK_WARMUP_S,
      seconds: SOAK,
      ...soakRss,
      errors: soak.errors,
      latency: soak.latency,
      generator: soak.generator,
      window: soak.window,
    },
    protocols: m.protocols,
    accessLog: m.accessLog,
    apply,
    lookups,
    targets: TARGETS,
  };
}

export function proxyChecks(result: ProxyResult, m: Measured): Check[] {
  const { throughput, soak, apply, lookups } = m;
  const { rounds, fixed } = m.fixedRate;
  const errorsTotal =
    Object.values(throughput).reduce((n, t) => n + t.errors + t.non2xx, 0) +
    Object.values(fixed).reduce((n, f) => n + f.errors, 0) +
    soak.errors +
    m.accessLog.errors +
    Object.values(m.protocols).reduce((n, p) => n + p.bare.errors + p.proxy.errors, 0);
  // What the generator and the machine themselves contributed during the fixed-rate windows (see generator.ts).
  const stall = Math.max(...Object.values(fixed).map((f) => f.generatorLoopDelayMaxMs));
  const idleStall = Math.max(...Object.values(fixed).map((f) => f.idleStallMaxMs));
  return [
    [
      'throughput ≥ 80% of the bare proxy',
      result.ratios.proxyVsBare >= TARGETS.throughputVsBare,
      `${result.ratios.proxyVsBare}`,
    ],
    [
      'added p50 < 1 ms at the fixed rate',
      result.fixedRate.addedP50Ms < TARGETS.addedP50Ms,
      `${result.fixedRate.addedP50Ms} ms`,
    ],
    [
      'added p99 < 5 ms at the fixed rate',
      result.fixedRate.addedP99Ms < TARGETS.addedP99Ms,
      `${result.fixedRate.addedP99Ms} ms pooled over ${FIXED_ROUNDS} rounds (per round ${rounds.map((r) => r.addedP99Ms).join(', ')}; the bare Node proxy ${result.fixedRate.bareAddedP99Ms} ms pooled); during the windows the generator's event loop stalled up to ${stall} ms and an idle process's up to ${idleStall} ms`,
    ],
    ...Object.entries(m.protocols).map(
      ([p, r]): Check => [
        `${p}: throughput ≥ 80% of the bare node:${p.startsWith('h2') ? 'http2' : 'tls + node:http'} proxy`,
        r.ratio >= TARGETS.throughputVsBare,
        `${r.ratio} (${r.proxy.rps} against ${r.bare.rps} req/s${p === 'https-handshake' ? ': handshakes/s' : ''})`,
      ],
    ),
    ...accessLogChecks(m.accessLog),
    ['zero errors', errorsTotal === 0, String(errorsTotal)],
    [
      'RSS growth < 20% over the soak',
      result.soak.growth < TARGETS.rssGrowth,
      `${Math.round(result.soak.growth * 100)}% from the baseline after a ${SOAK_WARMUP_S} s warm-up to the end, max ${Math.round(result.soak.maxGrowth * 100)}%, slope ${result.soak.slopeMbPerMin} MB/min`,
    ],
    [
      '1,000-route RouteConfiguration applied < 100 ms',
      apply.medianMs < TARGETS.applyMs,
      `push → ACK median ${apply.medianMs} ms, update_duration p50 ${apply.updateDurationMs?.p50} ms`,
    ],
    [
      'lookup cost not linear in virtual hosts (1,000× the hosts, under 10% of linear growth)',
      lookups.at(-1)!.nsPerLookup < lookups[0]!.nsPerLookup * 100,
      `${lookups[0]!.nsPerLookup} → ${lookups.at(-1)!.nsPerLookup} ns for 10 → 10,000 vhosts; a linear scan goes ${lookups[0]!.linearScanNs} → ${lookups.at(-1)!.linearScanNs} ns`,
    ],
  ];
}

function closedLoopSection(result: ProxyResult): string[] {
  const { throughput } = result;
  return [
    `## ${CONNECTIONS} connections, ${DURATION} s (autocannon)`,
    '',
    '| path | req/s | p50 ms | p99 ms | errors | RSS MB |',
    '|---|---|---|---|---|---|',
    ...Object.entries(throughput).map(
      ([n, t]) => `| ${n} | ${t.rps} | ${t.p50} | ${t.p99} | ${t.errors + t.non2xx} | ${t.rssMb} |`,
    ),
    '',
    `Ratios: proxy/bare ${result.ratios.proxyVsBare}, proxy/direct ${result.ratios.proxyVsDirect}, bare/direct ${result.ratios.bareVsDirect}.`,
    '',
    `CPU per request during the ${DURATION} s (µs, user + system, from /proc; the generator is autocannon in the bench process): ${Object.entries(
      throughput,
    )
      .map(([n, t]) => `${n} ${fmtCpu(t.window)}`)
      .join('; ')}. CPU pressure (share of the time some task waited for a CPU): ${Object.entries(throughput)
      .map(([n, t]) => `${n} ${t.window.cpuPressurePct}%`)
      .join(', ')}.`,
    '',
  ];
}

function fixedRateSection(result: ProxyResult, m: Measured): string[] {
  const { rate, why, probe } = m.choice;
  const { rounds, fixed, stallList, slowVsStalls } = m.fixedRate;
  return [
    `## Fixed rate ${rate} req/s: ${FIXED_ROUNDS} rounds of ${FIXED_WARMUP_S} s warm-up + ${DURATION} s per path`,
    '',
    `Rate: ${why}. Open-loop probe through the proxy (1 s warm-up + 2 s per rate): ${probe.map((x) => `${x.rate} req/s → achieved ${x.achievedRate}, p50 ${x.p50} ms, p99 ${x.p99} ms, ${x.sustained ? 'sustained' : 'NOT sustained'}`).join('; ')}.`,
    '',
    'Latency from each request\'s due time (corrected for coordinated omission), pooled over every request of every round; the paths take turns within each round, in a rotated order. "Service" is from the actual write and "send lag" is how late the generator wrote (medians of the per-round p99s). The generator columns are its own event-loop delay and GC; "idle stall" is the largest event-loop delay of the (idle) bench process meanwhile: what the machine alone does to any process.',
    '',
    '| path | requests | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | service p99 ms | send lag p99 ms | errors | achieved req/s | generator loop delay max ms | generator GC max ms | idle stall ms | CPU pressure | CPU µs/request |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...Object.entries(fixed).map(
      ([n, f]) =>
        `| ${n} | ${f.requests} | ${f.latency.p50} | ${f.latency.p90} | ${f.latency.p99} | ${f.latency.p999} | ${f.latency.max} | ${f.serviceP99MedianMs} | ${f.sendLagP99MedianMs} | ${f.errors} | ${f.achievedRate} | ${f.generatorLoopDelayMaxMs} | ${f.generatorGcMaxMs} | ${f.idleStallMaxMs} | ${f.cpuPressurePct}% | ${Object.entries(
          f.cpuUsPerRequest,
        )
          .map(([k, v]) => `${k} ${Math.round(v)}`)
          .join(', ')} |`,
    ),
    '',
    `Per round (p99 ms of each ${DURATION} s window, and what the proxies added to direct in that round):`,
    '',
    '| round | order | direct p99 | bare p99 | proxy p99 | added by the proxy | added by the bare proxy |',
    '|---|---|---|---|---|---|---|',
    ...rounds.map(
      (r) =>
        `| ${r.round} | ${r.order.join(' → ')} | ${r.runs.direct!.latency.p99} | ${r.runs.bare!.latency.p99} | ${r.runs.proxy!.latency.p99} | ${r.addedP99Ms} | ${r.bareAddedP99Ms} |`,
    ),
    '',
    `Where the slowest requests fall: during the rounds this (idle) bench process stalled ${stallList.length} times for ${STALL_MIN_MS} ms or more (its ${STALL_TICK_MS} ms timer fired that late; the longest ${result.fixedRate.stalls.maxMs} ms). Of the requests at or above each path's pooled p99, the share due from ${STALL_BEFORE_MS} ms before a stall to ${STALL_AFTER_MS} ms after it, against the share of all its requests: ${Object.entries(
      slowVsStalls,
    )
      .map(([n, x]) => `${n} ${x.slowInStallPct}% against ${x.allInStallPct}%`)
      .join(', ')}.`,
    '',
    `Added by the proxy against direct, pooled: p50 ${result.fixedRate.addedP50Ms} ms, p99 ${result.fixedRate.addedP99Ms} ms; the bare Node proxy: p50 ${result.fixedRate.bareAddedP50Ms} ms, p99 ${result.fixedRate.bareAddedP99Ms} ms. Median over the rounds of the per-round added p99: proxy ${result.fixedRate.medianRoundAddedP99Ms} ms, bare ${result.fixedRate.medianRoundBareAddedP99Ms} ms.`,
    '',
  ];
}

function protocolsSection(m: Measured): string[] {
  return [
    `## HTTPS and HTTP/2: 2 rounds of ${DURATION} s per path (each after a 2 s warm-up), against bare node:tls / node:http2 proxies`,
    '',
    `Both forward to the sample application over HTTP/1.1; the proxy serves h2 and HTTPS/1.1 on a TLS listener (ALPN h2, http/1.1) and h2c on its plain one. https: ${CONNECTIONS} kept-alive HTTPS/1.1 connections; h2 and h2c: ${CONNECTIONS} concurrent streams over 5 sessions; https-handshake: 10 loops, a new TLS connection (full handshake, RSA 2048) per request, so req/s is handshakes/s. The generator runs in the bench process; req/s is the mean of the two rounds, p50/p99 the worse round.`,
    '',
    '| protocol | bare req/s | proxy req/s | proxy/bare | bare p50/p99 ms | proxy p50/p99 ms | errors (bare, proxy) |',
    '|---|---|---|---|---|---|---|',
    ...Object.entries(m.protocols).map(
      ([p, r]) =>
        `| ${p} | ${r.bare.rps} | ${r.proxy.rps} | ${r.ratio} | ${r.bare.p50} / ${r.bare.p99} | ${r.proxy.p50} / ${r.proxy.p99} | ${r.bare.errors}, ${r.proxy.errors} |`,
    ),
    '',
  ];
}

function soakAndControlSections(m: Measured, checks: Check[]): string[] {
  const { soak, soakRss, apply, lookups } = m;
  const { rate } = m.choice;
  return [
    `## Soak ${SOAK} s at ${rate} req/s through a fresh proxy process, after a ${SOAK_WARMUP_S} s warm-up at that rate`,
    '',
    `RSS: ${soakRss.startedMb} MB idle; baseline ${soakRss.baselineMb} MB (end of the warm-up) → end ${soakRss.endMb} MB (${Math.round(soakRss.growth * 100)}%); min ${soakRss.minMb}, max ${soakRss.maxMb} MB (${Math.round(soakRss.maxGrowth * 100)}%); slope ${soakRss.slopeMbPerMin} MB/min. Latency p50 ${soak.latency.p50} ms, p99 ${soak.latency.p99} ms; errors ${soak.errors}.`,
    '',
    `## RouteConfiguration of ${apply.routes} routes (${apply.bytes} bytes) over ADS`,
    '',
    `Push → ACK at the control plane: ${apply.ackMs.join(', ')} ms (median ${apply.medianMs}). The proxy's update_duration (arrival → ACK): p50 ${apply.updateDurationMs?.p50} ms, p99 ${apply.updateDurationMs?.p99} ms. Decode + compile alone, in-process: ${apply.decodeCompileMs} ms.`,
    '',
    '## Route lookup cost',
    '',
    '| virtual hosts | ns per lookup | linear scan ns (contrast) |',
    '|---|---|---|',
    ...lookups.map((l) => `| ${l.vhosts} | ${l.nsPerLookup} | ${l.linearScanNs} |`),
    '',
    '## Targets',
    '',
    ...checks.map(([what, ok, v]) => `- ${ok ? 'met' : 'NOT met'}: ${what} (${v})`),
    '',
  ];
}

/** proxy.md. */
export function proxyMarkdown(result: ProxyResult, checks: Check[], m: Measured): string {
  return [
    `# bench:proxy — ${result.date}`,
    '',
    `Machine: ${result.machine.cpus} CPUs, Node ${result.machine.node}, load average before ${result.machine.loadBefore.join(' ')}, after ${result.machine.loadAfter.join(' ')} (other processes share this machine; re-run on a quiet one for reference figures).`,
    '',
    ...closedLoopSection(result),
    ...fixedRateSection(result, m),
    ...protocolsSection(m),
    ...accessLogSection(m.accessLog),
    ...soakAndControlSections(m, checks),
  ].join('\n');
}
