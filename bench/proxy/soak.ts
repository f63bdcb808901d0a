// bench:proxy's soak: the fixed rate through a fresh proxy process with the same bootstrap, its RSS baseline taken
// after a warm-up at the soak rate, then RSS (baseline, min, max, end, least-squares slope) over SOAK seconds. Read
// right after the 50-connection phase, the baseline was the heap that phase had grown, which V8 gives back at times
// of its own choosing: soaks on that process measured -25% and -33% with the same "baseline", and would have hidden
// a leak as large. A fresh process at this rate reaches its steady RSS within about 5 s (213 MB idle with the 1,000
// routes, 276 MB after 5 s at 4,092 req/s, 276-279 MB for the next 65 s).
import { rssMb } from '../shared/proc.ts';
import { progress } from '../shared/reports.ts';
import { round2, slope } from '../shared/stats.ts';
import { openLoopRun, type SampledOpenLoop } from './open-loop-run.ts';
import { proxyBootstrap } from './route-table.ts';
import { listenerPort, type Servers, startProxyProcess } from './servers.ts';
import { PROXY_PATH, SOAK, SOAK_WARMUP_S } from './settings.ts';

const step = progress('proxy');

export interface SoakRss {
  /** The fresh process before any request, for reference. */
  startedMb: number;
  baselineMb: number;
  minMb: number;
  maxMb: number;
  endMb: number;
  growth: number;
  maxGrowth: number;
  /** Least-squares slope of the samples, MB per minute (a leak shows as a steady positive slope). */
  slopeMbPerMin: number;
  samples: Array<{ s: number; mb: number }>;
}

/** Replaces the measured proxy by a fresh one (proxy files in `dir`) and soaks it at `rate`. */
export async function soakPhase(
  servers: Servers,
  rate: number,
  dir: string,
): Promise<{ soak: SampledOpenLoop; soakRss: SoakRss }> {
  step(`soak: ${rate} req/s through a fresh proxy process, ${SOAK_WARMUP_S} s warm-up, then RSS over ${SOAK} s`);
  servers.proxy.child.kill('SIGKILL');
  const soakPx = await startProxyProcess(proxyBootstrap(servers.appPort), dir, 'soak');
  const soakPort = await listenerPort(soakPx.admin);
  const pid = soakPx.child.pid!;
  const rssFresh = rssMb(pid);
  let rssBase = Number.NaN;
  const rssSamples: Array<{ s: number; mb: number }> = [];
  let soakT0 = 0;
  const soak = await openLoopRun(
    soakPort,
    PROXY_PATH,
    rate,
    SOAK_WARMUP_S,
    SOAK,
    { proxy: pid, app: servers.appPid },
    {
      onWindowStart: () => {
        rssBase = rssMb(pid);
        soakT0 = performance.now();
        rssSamples.push({ s: 0, mb: rssBase });
      },
      onTick: () => rssSamples.push({ s: (performance.now() - soakT0) / 1000, mb: rssMb(pid) }),
    },
  );
  const rssEnd = rssMb(pid);
  rssSamples.push({ s: (performance.now() - soakT0) / 1000, mb: rssEnd });
  const mbs = rssSamples.map((x) => x.mb);
  soakPx.child.kill('SIGKILL');
  const soakRss: SoakRss = {
    startedMb: round2(rssFresh),
    baselineMb: round2(rssBase),
    minMb: round2(Math.min(...mbs)),
    maxMb: round2(Math.max(...mbs)),
    endMb: round2(rssEnd),
    growth: round2((rssEnd - rssBase) / rssBase),
    maxGrowth: round2((Math.max(...mbs) - rssBase) / rssBase),
    slopeMbPerMin: round2(
      slope(
        rssSamples.map((x) => x.s),
        mbs,
      ) * 60,
    ),
    samples: rssSamples.map((x) => ({ s: Math.round(x.s), mb: round2(x.mb) })),
  };
  step(
    `  rss ${soakRss.startedMb} MB idle, baseline ${soakRss.baselineMb} MB (after the warm-up) → end ${soakRss.endMb} MB (${Math.round(soakRss.growth * 100)}%), min ${soakRss.minMb}, max ${soakRss.maxMb}, slope ${soakRss.slopeMbPerMin} MB/min; p50 ${soak.latency.p50} ms p99 ${soak.latency.p99} ms, errors ${soak.errors}`,
  );
  return { soak, soakRss };
}
