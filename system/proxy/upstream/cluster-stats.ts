// Envoy's cluster.<name>.* statistics: the counters, gauges and histograms every cluster has from its creation.
import type { Counter, Gauge, Histogram, StatsStore } from '../stats.ts';

export interface ClusterStats {
  [k: string]: Counter | Gauge | Histogram;
  upstream_rq_total: Counter;
  upstream_rq_completed: Counter;
  upstream_rq_active: Gauge;
  upstream_rq_pending_total: Counter;
  upstream_rq_pending_active: Gauge;
  upstream_rq_pending_overflow: Counter;
  upstream_rq_cancelled: Counter;
  upstream_rq_timeout: Counter;
  upstream_rq_per_try_timeout: Counter;
  upstream_rq_retry: Counter;
  upstream_rq_retry_success: Counter;
  upstream_rq_retry_overflow: Counter;
  upstream_rq_retry_limit_exceeded: Counter;
  upstream_rq_rx_reset: Counter;
  upstream_rq_tx_reset: Counter;
  upstream_rq_maintenance_mode: Counter;
  upstream_cx_total: Counter;
  upstream_cx_active: Gauge;
  upstream_cx_http1_total: Counter;
  upstream_cx_http2_total: Counter;
  upstream_cx_connect_fail: Counter;
  upstream_cx_connect_timeout: Counter;
  upstream_cx_overflow: Counter;
  upstream_cx_none_healthy: Counter;
  upstream_cx_destroy: Counter;
  upstream_cx_destroy_local: Counter;
  upstream_cx_destroy_remote: Counter;
  upstream_cx_connect_ms: Histogram;
  upstream_cx_length_ms: Histogram;
  upstream_rq_time: Histogram;
  lb_healthy_panic: Counter;
  membership_change: Counter;
  membership_healthy: Gauge;
  membership_degraded: Gauge;
  membership_excluded: Gauge;
  membership_total: Gauge;
  max_host_weight: Gauge;
  update_attempt: Counter;
  update_success: Counter;
  update_rejected: Counter;
  update_failure: Counter;
  update_empty: Counter;
  update_no_rebuild: Counter;
  version: Gauge;
}

const COUNTERS = [
  'upstream_rq_total',
  'upstream_rq_completed',
  'upstream_rq_pending_total',
  'upstream_rq_pending_overflow',
  'upstream_rq_cancelled',
  'upstream_rq_timeout',
  'upstream_rq_per_try_timeout',
  'upstream_rq_retry',
  'upstream_rq_retry_success',
  'upstream_rq_retry_overflow',
  'upstream_rq_retry_limit_exceeded',
  'upstream_rq_rx_reset',
  'upstream_rq_tx_reset',
  'upstream_rq_maintenance_mode',
  'upstream_cx_total',
  'upstream_cx_http1_total',
  'upstream_cx_http2_total',
  'upstream_cx_connect_fail',
  'upstream_cx_connect_timeout',
  'upstream_cx_overflow',
  'upstream_cx_none_healthy',
  'upstream_cx_destroy',
  'upstream_cx_destroy_local',
  'upstream_cx_destroy_remote',
  'lb_healthy_panic',
  'membership_change',
  'update_attempt',
  'update_success',
  'update_rejected',
  'update_failure',
  'update_empty',
  'update_no_rebuild',
];
const GAUGES = [
  'upstream_rq_active',
  'upstream_rq_pending_active',
  'upstream_cx_active',
  'membership_healthy',
  'membership_degraded',
  'membership_excluded',
  'membership_total',
  'max_host_weight',
  'version',
];

/** Creates a cluster's stats under `cluster.<name>.`. */
export function makeClusterStats(store: StatsStore, name: string): ClusterStats {
  const prefix = `cluster.${name}.`;
  const s: Record<string, Counter | Gauge | Histogram> = {};
  for (const k of COUNTERS) s[k] = store.counter(prefix + k);
  for (const k of GAUGES) s[k] = store.gauge(prefix + k);
  s.upstream_cx_connect_ms = store.histogram(prefix + 'upstream_cx_connect_ms');
  s.upstream_cx_length_ms = store.histogram(prefix + 'upstream_cx_length_ms');
  s.upstream_rq_time = store.histogram(prefix + 'upstream_rq_time');
  return s as ClusterStats;
}
