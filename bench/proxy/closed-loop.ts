// bench:proxy's closed-loop phase: CONNECTIONS autocannon clients (each waits for its answer before the next request)
// for DURATION seconds per path, after a 2 s warm-up → req/s, p50/p99, errors, the serving process's RSS and the CPU
// per request of every process (autocannon runs in the bench process, so its CPU is the bench's).
// @ts-expect-error autocannon ships no type declarations
import autocannon from 'autocannon';
import { rssMb } from '../shared/proc.ts';
import { progress } from '../shared/reports.ts';
import { round2 } from '../shared/stats.ts';
import type { Servers } from './servers.ts';
import { CONNECTIONS, DURATION, HOST } from './settings.ts';
import { fmtCpu, type WindowSample, windowSampler } from './window.ts';

const step = progress('proxy');

export interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export type PathThroughput = Throughput & { rssMb: number; window: WindowSample };

/** CONNECTIONS autocannon clients on one path for `seconds` (request headers: the bench's Host, and `headers`). */
export function autocannonRun(
  port: number,
  path: string,
  seconds: number,
  headers: Record<string, string> = {},
): Promise<Throughput> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${path}`,
        connections: CONNECTIONS,
        duration: seconds,
        headers: { host: HOST, ...headers },
      },
      (
        err: Error | null,
        r: {
          requests: { average: number };
          latency: { p50: number; p99: number };
          errors: number;
          timeouts: number;
          non2xx: number;
        },
      ) => {
        if (err) return reject(err);
        resolve({
          rps: Math.round(r.requests.average),
          p50: r.latency.p50,
          p99: r.latency.p99,
          errors: r.errors + r.timeouts,
          non2xx: r.non2xx,
        });
      },
    );
  });
}

/** Every path in turn: a 2 s warm-up, then DURATION seconds measured. */
export async function closedLoopPhase(servers: Servers): Promise<Record<string, PathThroughput>> {
  step(`throughput: ${CONNECTIONS} connections, ${DURATION} s per path (after a 2 s warm-up)`);
  const throughput: Record<string, PathThroughput> = {};
  for (const p of servers.paths) {
    await autocannonRun(p.port, p.path, 2);
    // autocannon runs in this process: its CPU is this process's.
    const sampler = windowSampler({ ...servers.serversOf[p.name]!, generator: process.pid });
    sampler.start();
    const t = await autocannonRun(p.port, p.path, DURATION);
    const window = sampler.end(t.rps * DURATION);
    throughput[p.name] = { ...t, rssMb: round2(rssMb(p.pid!)), window };
    step(
      `  ${p.name}: ${t.rps} req/s p50 ${t.p50} ms p99 ${t.p99} ms errors ${t.errors} non2xx ${t.non2xx} rss ${throughput[p.name]!.rssMb} MB; CPU µs/request ${fmtCpu(window)}`,
    );
  }
  return throughput;
}
