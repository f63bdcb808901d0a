// A cluster's load balancer (Envoy's LoadBalancerBase and its policies): the first priority with a healthy host
// takes the traffic, balanced across all of its hosts instead when its healthy share is under the healthy-panic
// threshold (lb_healthy_panic); then round robin (smooth weighted when weights differ), random, or least request
// (power of N choices, or weight / (active + 1) when weights differ), or a consistent hash of the request (RING_HASH,
// MAGLEV: hash-lb.ts). A host is healthy when its EDS status is and neither active health checking nor outlier
// detection failed it (Host.healthy).
import type { Counter } from '../stats.ts';
import type { LbPolicy } from './cluster-config.ts';
import type { RingSpec } from './cluster-health-config.ts';
import { HashPicker } from './hash-lb.ts';
import type { Host } from './host.ts';

export class LoadBalancer {
  private readonly policy: LbPolicy;
  private readonly panicThreshold: number;
  private readonly choiceCount: number;
  private readonly panicCounter: Counter;
  private hosts: Host[] = [];
  private byPriority: Host[][] = [];
  private rr = 0;
  private readonly hashPicker: HashPicker | undefined;

  constructor(policy: LbPolicy, panicThreshold: number, choiceCount: number, panicCounter: Counter, ring?: RingSpec) {
    this.policy = policy;
    if (policy === 'RING_HASH' || policy === 'MAGLEV') {
      this.hashPicker = new HashPicker(policy, ring ?? { minimumRingSize: 1024, maximumRingSize: 8_388_608 });
    }
    this.panicThreshold = panicThreshold;
    this.choiceCount = choiceCount;
    this.panicCounter = panicCounter;
  }

  /** A new host set: hosts grouped by priority. */
  update(hosts: Host[]): void {
    this.hosts = hosts;
    this.byPriority = [];
    for (const h of hosts) {
      this.byPriority[h.priority] ??= [];
      this.byPriority[h.priority]!.push(h);
    }
  }

  /** Picks a host for a request (`hash`: its hash for RING_HASH/MAGLEV); undefined means "no healthy upstream". */
  choose(hash?: bigint): Host | undefined {
    // The first priority with a healthy host takes the traffic (no spill-over between priorities); when its
    // healthy share is under the panic threshold, Envoy balances across all of its hosts instead.
    let candidates: Host[] | undefined;
    let panic = false;
    for (const hosts of this.byPriority) {
      if (!hosts || hosts.length === 0) continue;
      const healthy = hosts.filter((h) => h.healthy);
      if (healthy.length === 0) continue;
      if ((healthy.length * 100) / hosts.length < this.panicThreshold) {
        candidates = hosts;
        panic = true;
      } else {
        candidates = healthy;
      }
      break;
    }
    if (!candidates) {
      const all = this.hosts;
      if (all.length === 0) return undefined;
      const degraded = all.filter((h) => h.health === 'DEGRADED');
      if (degraded.length > 0) candidates = degraded;
      else if (this.panicThreshold > 0) {
        candidates = this.byPriority.find((h) => h && h.length > 0)!;
        panic = true;
      } else return undefined;
    }
    if (panic) this.panicCounter.inc();
    if (candidates.length === 1) return candidates[0];
    if (this.hashPicker) return this.hashPicker.pick(candidates, hash);
    switch (this.policy) {
      case 'RANDOM':
        return candidates[Math.floor(Math.random() * candidates.length)];
      case 'LEAST_REQUEST':
        return leastRequest(candidates, this.choiceCount);
      default:
        return this.roundRobin(candidates);
    }
  }

  private roundRobin(hosts: Host[]): Host {
    const w0 = hosts[0]!.weight;
    if (hosts.every((h) => h.weight === w0)) return hosts[this.rr++ % hosts.length]!;
    // Smooth weighted round robin (nginx): even spread, proportional to the weights.
    let total = 0;
    let best: Host = hosts[0]!;
    for (const h of hosts) {
      h.current += h.weight;
      total += h.weight;
      if (h.current > best.current) best = h;
    }
    best.current -= total;
    return best;
  }
}

function leastRequest(hosts: Host[], choices: number): Host {
  const w0 = hosts[0]!.weight;
  if (hosts.every((h) => h.weight === w0)) {
    // Power of N choices: the least loaded of `choices` random picks.
    let best: Host | undefined;
    for (let i = 0; i < Math.max(1, choices); i++) {
      const h = hosts[Math.floor(Math.random() * hosts.length)]!;
      if (!best || h.stats.rq_active < best.stats.rq_active) best = h;
    }
    return best!;
  }
  // Weighted: weight / (active + 1), as Envoy's EDF with active_request_bias 1.
  let best = hosts[0]!;
  let bestScore = -1;
  for (const h of hosts) {
    const score = h.weight / (h.stats.rq_active + 1) + Math.random() * 1e-9;
    if (score > bestScore) {
      best = h;
      bestScore = score;
    }
  }
  return best;
}
