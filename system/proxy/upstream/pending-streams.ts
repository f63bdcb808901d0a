// The streams a pool holds while no connection (HTTP/1.1) or stream slot (HTTP/2) is free, as Envoy's pools keep
// them (ConnPoolImplBase::pending_streams_): queued only while the cluster's circuit breaker allows one more pending
// request (max_pending_requests; over it: upstream_rq_pending_overflow), counted in upstream_rq_pending_total and
// _active and in the breaker's remaining count, taken oldest first, cancelled by a downstream that goes away
// (upstream_rq_cancelled), purged when connecting fails. The HTTP/1.1 pool (pool.ts) and the HTTP/2 client
// (http2-client.ts) share it.
import type { Counter, Gauge } from '../stats.ts';

let pendingId = 0;

export interface Pending<C> {
  readonly callbacks: C;
  cancelled: boolean;
  readonly tags: Record<string, string | number>;
}

/** What the queue counts in: the cluster's breaker (resources.ts) and stats. */
export interface QueueCluster {
  readonly resources: { pendingRequests: number; canQueue(): boolean };
  readonly stats: {
    readonly upstream_rq_pending_total: Counter;
    readonly upstream_rq_pending_active: Gauge;
    readonly upstream_rq_pending_overflow: Counter;
    readonly upstream_rq_cancelled: Counter;
  };
}

export class PendingStreams<C> {
  private readonly queue: Pending<C>[] = [];
  private readonly cluster: QueueCluster;

  constructor(cluster: QueueCluster) {
    this.cluster = cluster;
  }

  get length(): number {
    return this.queue.length;
  }

  /** Queues a stream; undefined when the breaker allows no more pending requests (the overflow counted). */
  enqueue(callbacks: C, tags: Record<string, string | number>): Pending<C> | undefined {
    const c = this.cluster;
    if (!c.resources.canQueue()) {
      c.stats.upstream_rq_pending_overflow.inc();
      return undefined;
    }
    const p: Pending<C> = { callbacks, cancelled: false, tags: { ...tags, PendingId: ++pendingId } };
    this.queue.push(p);
    c.resources.pendingRequests++;
    c.stats.upstream_rq_pending_total.inc();
    c.stats.upstream_rq_pending_active.add(1);
    return p;
  }

  /** The downstream went away while waiting. */
  cancel(p: Pending<C>): void {
    if (p.cancelled) return;
    p.cancelled = true;
    const i = this.queue.indexOf(p);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.left(1);
      this.cluster.stats.upstream_rq_cancelled.inc();
    }
  }

  /** The oldest stream, out of the queue (a cancelled one is the caller's to skip). */
  shift(): Pending<C> | undefined {
    const p = this.queue.shift();
    if (p) this.left(1);
    return p;
  }

  /** Every stream, out of the queue (connecting failed, or the pool closes). */
  drain(): Pending<C>[] {
    const all = this.queue.splice(0);
    this.left(all.length);
    return all;
  }

  private left(n: number): void {
    this.cluster.resources.pendingRequests -= n;
    this.cluster.stats.upstream_rq_pending_active.sub(n);
  }
}
