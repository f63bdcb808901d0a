// Bookkeeping every xDS resource manager shares (clusters, listeners, route configurations): the rejected update
// kept per resource for config_dump's `error_state` (Envoy's UpdateFailureState), whether an update changes a
// resource, the hash of a version_info that Envoy exports as the `version` gauges, the stats of a subscription, and
// the initialization of a subscription whose resources warm (CDS, LDS).
import type { Counter, StatsStore } from '../stats.ts';

type J = Record<string, any>;

/** envoy.admin.v3.UpdateFailureState: the last rejected update of one resource, as config_dump shows it. */
export interface ErrorState {
  failed_configuration: J;
  last_update_attempt: string;
  details: string;
  version_info: string;
}

/** The error_state of a rejected resource: its JSON as an Any of `typeUrl`, why, when and in which version. */
export function errorState(typeUrl: string, json: J, details: string, version: string, now: string): ErrorState {
  return {
    failed_configuration: { '@type': typeUrl, ...json },
    last_update_attempt: now,
    details,
    version_info: version,
  };
}

/** Whether two resources (canonical JSON) are the same: one object, or the same JSON text. */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** A stable number for a version string (Envoy exports a hash of version_info as the `version` gauge). */
export function versionHash(v: string): number {
  let h = 0x811c9dc5;
  let h2 = 0;
  for (let i = 0; i < v.length; i++) {
    h ^= v.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
    h2 = (h2 * 31 + v.charCodeAt(i)) % 2097152;
  }
  return h2 * 4294967296 + h;
}

/**
 * The stats of one xDS subscription under `prefix` (`cluster_manager.cds.`, `listener_manager.lds.`): Envoy's
 * SubscriptionStats (source/common/config/utility.h, ALL_SUBSCRIPTION_STATS) but for the text readout.
 */
export function subscriptionStats(s: StatsStore, prefix: string) {
  return {
    update_attempt: s.counter(`${prefix}update_attempt`),
    update_success: s.counter(`${prefix}update_success`),
    update_rejected: s.counter(`${prefix}update_rejected`),
    update_failure: s.counter(`${prefix}update_failure`),
    update_empty: s.counter(`${prefix}update_empty`),
    init_fetch_timeout: s.counter(`${prefix}init_fetch_timeout`),
    version: s.gauge(`${prefix}version`),
  };
}

/**
 * The initialization of a subscription whose resources warm (Envoy's init target of CDS and LDS): done once its
 * first response was applied, or its initial fetch timed out (counted in `init_fetch_timeout`), and no resource
 * is warming any more.
 */
export class WarmingInit {
  private received = false;
  private readonly waiters: Array<() => void> = [];
  private readonly warming: () => boolean;
  private readonly fetchTimeouts: Counter;

  constructor(warming: () => boolean, fetchTimeouts: Counter) {
    this.warming = warming;
    this.fetchTimeouts = fetchTimeouts;
  }

  /** The first response was applied. */
  responseApplied(): void {
    this.received = true;
    this.check();
  }

  /** The initial fetch timed out or the stream failed: initialization goes on without it (Envoy's behaviour). */
  fetchTimedOut(): void {
    if (this.received) return;
    this.fetchTimeouts.inc();
    this.responseApplied();
  }

  /** A resource finished warming (or went): resolves the waiters when it was the last. */
  check(): void {
    if (!this.received || this.warming()) return;
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves when initialization is done. */
  done(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.check();
    });
  }
}
