// A cluster's circuit breakers (Envoy's ResourceManager for the DEFAULT priority): what is open against the
// thresholds (connections, pending requests, requests, retries), and the cluster.<name>.circuit_breakers.default.*
// gauges (`*_open`, and `remaining_*` with track_remaining).
import type { Gauge, StatsStore } from '../stats.ts';
import type { Thresholds } from './cluster-config.ts';

export class Resources {
  connections = 0;
  pendingRequests = 0;
  requests = 0;
  retries = 0;
  readonly t: Thresholds;
  private readonly gauges: Record<string, Gauge>;

  constructor(t: Thresholds, stats: StatsStore, clusterName: string) {
    this.t = t;
    const cb = `cluster.${clusterName}.circuit_breakers.default.`;
    this.gauges = {
      cx_open: stats.gauge(cb + 'cx_open'),
      cx_pool_open: stats.gauge(cb + 'cx_pool_open'),
      rq_open: stats.gauge(cb + 'rq_open'),
      rq_pending_open: stats.gauge(cb + 'rq_pending_open'),
      rq_retry_open: stats.gauge(cb + 'rq_retry_open'),
    };
    if (t.trackRemaining) {
      for (const k of ['remaining_cx', 'remaining_pending', 'remaining_rq', 'remaining_retries']) {
        this.gauges[k] = stats.gauge(cb + k);
      }
    }
  }

  canConnect(): boolean {
    return this.connections < this.t.maxConnections;
  }
  canQueue(): boolean {
    return this.pendingRequests < this.t.maxPendingRequests;
  }
  canRequest(): boolean {
    return this.requests < this.t.maxRequests;
  }
  canRetry(): boolean {
    return this.retries < this.t.maxRetries;
  }

  /** Sets the circuit breaker gauges from the counts. */
  updateGauges(): void {
    const t = this.t;
    const g = this.gauges;
    g.cx_open!.set(this.connections >= t.maxConnections ? 1 : 0);
    g.rq_open!.set(this.requests >= t.maxRequests ? 1 : 0);
    g.rq_pending_open!.set(this.pendingRequests >= t.maxPendingRequests ? 1 : 0);
    g.rq_retry_open!.set(this.retries >= t.maxRetries ? 1 : 0);
    if (t.trackRemaining) {
      g.remaining_cx!.set(Math.max(0, t.maxConnections - this.connections));
      g.remaining_pending!.set(Math.max(0, t.maxPendingRequests - this.pendingRequests));
      g.remaining_rq!.set(Math.max(0, t.maxRequests - this.requests));
      g.remaining_retries!.set(Math.max(0, t.maxRetries - this.retries));
    }
  }
}
