// Events expire, as kube-apiserver's `--event-ttl` (default 1 h) makes them: etcd stores every Event with a lease of
// that length, renewed by each write of the Event, and deletes it when the lease runs out (watchers see DELETED).
// Without it a lab that lives for days keeps every Event it ever recorded, in memory and in `kubectl get events`.
// The store has no leases, so the expiry is tracked here: the time of each Event's last write seen by this process,
// and for Events loaded at start (written before a restart) the latest time the Event itself carries.
import type { K8sObject, Store } from './store.ts';

/** kube-apiserver's --event-ttl default. */
export const EVENT_TTL_SECONDS = 3600;
const BUCKET = 'core/events';

export interface EventTtlOptions {
  ttlSeconds?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** The latest time an Event says it was written (its last occurrence, series or creation), in ms; NaN if none. */
function carriedTime(ev: K8sObject): number {
  const times = [ev.lastTimestamp, ev.series?.lastObservedTime, ev.eventTime, ev.metadata?.creationTimestamp]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => Date.parse(t))
    .filter((t) => Number.isFinite(t));
  return times.length ? Math.max(...times) : Number.NaN;
}

export class EventTtl {
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** Event key → when its lease runs out. */
  private readonly expiry = new Map<string, number>();
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  private readonly store: Store;

  constructor(store: Store, opts: EventTtlOptions = {}) {
    this.store = store;
    this.ttlMs = (opts.ttlSeconds ?? EVENT_TTL_SECONDS) * 1000;
    this.now = opts.now ?? Date.now;
    for (const ev of store.list(BUCKET)) {
      const key = `${ev.metadata.namespace}/${ev.metadata.name}`;
      const at = carriedTime(ev);
      this.expiry.set(key, (Number.isFinite(at) ? Math.min(at, this.now()) : this.now()) + this.ttlMs);
    }
    this.unsubscribe = store.subscribe(BUCKET, (e) => {
      if (e.type === 'DELETED') this.expiry.delete(e.key);
      else this.expiry.set(e.key, this.now() + this.ttlMs);
    });
    // A lease runs out within a tenth of the TTL (at most a minute) of its time.
    this.timer = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, this.ttlMs / 10))).unref();
  }

  /** Deletes the Events whose lease has run out; returns how many. */
  sweep(): number {
    const t = this.now();
    let n = 0;
    for (const [key, at] of this.expiry) {
      if (at > t) continue;
      this.expiry.delete(key);
      if (this.store.remove(BUCKET, key)) n++;
    }
    return n;
  }

  stop(): void {
    clearInterval(this.timer);
    this.unsubscribe();
  }
}
