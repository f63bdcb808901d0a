// bench:proxy's side-by-side comparison of proxy variants (the phases that ask "what does this feature cost":
// access-log.ts, ext-authz-grpc.ts, feature-cost.ts): each variant a proxy process of its own listening on a port,
// every one warmed up 2 s, then `rounds` interleaved closed-loop rounds of `seconds` (autocannon, CONNECTIONS
// connections), the order rotated each round so that no variant always runs first → each round's throughput per
// variant, and per variant the medians over the rounds (req/s, p50, p99; errors and non-2xx summed). Given the
// variants' process ids, also each one's CPU µs per request over its windows (/proc, window.ts): on a shared, loaded
// machine throughput swings with the neighbours, CPU per request much less. With `concurrent`, a round loads every
// variant at once (CONNECTIONS connections each) instead of one after the other: they share the machine in the same
// window, so what it does meanwhile weighs on all of them alike and their throughput ratio is their cost ratio (an A/A
// run of one configuration twice reads 1.00-1.06 here, interleaved rounds ±20%).
import type { ChildProcess } from 'node:child_process';
import { progress } from '../shared/reports.ts';
import { median, round2 } from '../shared/stats.ts';
import { autocannonRun, type Throughput } from './closed-loop.ts';
import { listenerPort } from './servers.ts';
import { PROXY_PATH } from './settings.ts';
import { windowSampler } from './window.ts';

const step = progress('proxy');

/** One variant's figures of one round; `cpuUs`: its process's CPU µs per request (when its pid was given). */
export type RoundThroughput = Throughput & { cpuUs?: number };

export interface SideBySide<K extends string> {
  perRound: Record<K, RoundThroughput>[];
  /** Per variant, the medians over the rounds. */
  median: Record<K, RoundThroughput>;
}

/** The medians of several rounds' figures (errors and non-2xx summed). */
export function pooled(xs: RoundThroughput[]): RoundThroughput {
  const cpu = xs.map((x) => x.cpuUs).filter((x): x is number => x !== undefined);
  return {
    ...(cpu.length ? { cpuUs: round2(median(cpu)) } : {}),
    rps: Math.round(median(xs.map((x) => x.rps))),
    p50: median(xs.map((x) => x.p50)),
    p99: median(xs.map((x) => x.p99)),
    errors: xs.reduce((n, x) => n + x.errors, 0),
    non2xx: xs.reduce((n, x) => n + x.non2xx, 0),
  };
}

/** `a`'s req/s over `b`'s, each round; their median. */
export function medianRatio<K extends string>(s: SideBySide<K>, a: K, b: K): number {
  return round2(median(s.perRound.map((r) => (r[b].rps ? r[a].rps / r[b].rps : 0))));
}

export async function sideBySide<K extends string>(
  ports: Record<K, number>,
  o: {
    rounds: number;
    seconds: number;
    headers?: Record<string, string>;
    path?: string;
    pids?: Record<K, number>;
    concurrent?: boolean;
  },
): Promise<SideBySide<K>> {
  const names = Object.keys(ports) as K[];
  const path = o.path ?? PROXY_PATH;
  for (const k of names) await autocannonRun(ports[k], path, 2, o.headers);
  const measure = async (k: K): Promise<RoundThroughput> => {
    const pid = o.pids?.[k];
    const sampler = pid ? windowSampler({ proxy: pid }) : undefined;
    sampler?.start();
    const t: RoundThroughput = await autocannonRun(ports[k], path, o.seconds, o.headers);
    if (sampler) t.cpuUs = sampler.end(t.rps * o.seconds).cpuUsPerRequest.proxy!;
    return t;
  };
  const perRound: Record<K, RoundThroughput>[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const order = names.map((_, j) => names[(i + j) % names.length]!);
    const r = {} as Record<K, RoundThroughput>;
    if (o.concurrent) {
      const all = await Promise.all(order.map(measure));
      order.forEach((k, j) => {
        r[k] = all[j]!;
      });
    } else {
      for (const k of order) r[k] = await measure(k);
    }
    perRound.push(r);
    const cpu = (t: RoundThroughput) => (t.cpuUs === undefined ? '' : `, ${t.cpuUs} CPU µs/req`);
    step(`  round ${i + 1}: ${names.map((k) => `${k} ${r[k].rps} req/s (p99 ${r[k].p99} ms${cpu(r[k])})`).join(', ')}`);
  }
  const med = {} as Record<K, RoundThroughput>;
  for (const k of names) med[k] = pooled(perRound.map((r) => r[k]));
  return { perRound, median: med };
}

/**
 * Proxy processes (servers.ts startProxyProcess) side by side, loaded at once: each one's listener port (from its
 * admin) and its process for CPU per request.
 */
export async function proxiesSideBySide<K extends string>(
  proxies: Record<K, { child: ChildProcess; admin: string }>,
  o: { rounds: number; seconds: number },
): Promise<SideBySide<K>> {
  const ports = {} as Record<K, number>;
  const pids = {} as Record<K, number>;
  for (const k of Object.keys(proxies) as K[]) {
    ports[k] = await listenerPort(proxies[k].admin);
    pids[k] = proxies[k].child.pid!;
  }
  return sideBySide(ports, { ...o, pids, concurrent: true });
}
