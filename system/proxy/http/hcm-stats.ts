// Envoy's HTTP connection manager statistics: http.<stat_prefix>.* and, per listener,
// listener.<address>.http.<stat_prefix>.* (the router filter keeps its own: filters/router/router.ts).
import type { Counter, Gauge, Histogram, StatsStore } from '../stats.ts';

export interface HcmStats {
  downstream_cx_total: Counter;
  downstream_cx_active: Gauge;
  downstream_cx_http1_total: Counter;
  downstream_cx_http1_active: Gauge;
  downstream_cx_http2_total: Counter;
  downstream_cx_http2_active: Gauge;
  downstream_cx_destroy: Counter;
  downstream_cx_destroy_remote: Counter;
  downstream_cx_destroy_local: Counter;
  downstream_cx_length_ms: Histogram;
  downstream_cx_protocol_error: Counter;
  downstream_rq_total: Counter;
  downstream_rq_http1_total: Counter;
  downstream_rq_http2_total: Counter;
  downstream_rq_active: Gauge;
  downstream_rq_completed: Counter;
  downstream_rq_rx_reset: Counter;
  downstream_rq_tx_reset: Counter;
  downstream_rq_timeout: Counter;
  downstream_rq_non_relative_path: Counter;
  downstream_rq_ws_on_non_ws_route: Counter;
  downstream_rq_idle_timeout: Counter;
  downstream_cx_upgrades_total: Counter;
  downstream_cx_upgrades_active: Gauge;
  downstream_rq_time: Histogram;
  downstream_rq_xx: Counter[];
  listener_rq_xx: Counter[];
  listener_rq_completed: Counter;
}

export function makeHcmStats(store: StatsStore, prefix: string, listenerPrefix: string): HcmStats {
  const p = `http.${prefix}.`;
  const lp = `${listenerPrefix}http.${prefix}.`;
  return {
    downstream_cx_total: store.counter(p + 'downstream_cx_total'),
    downstream_cx_active: store.gauge(p + 'downstream_cx_active'),
    downstream_cx_http1_total: store.counter(p + 'downstream_cx_http1_total'),
    downstream_cx_http1_active: store.gauge(p + 'downstream_cx_http1_active'),
    downstream_cx_http2_total: store.counter(p + 'downstream_cx_http2_total'),
    downstream_cx_http2_active: store.gauge(p + 'downstream_cx_http2_active'),
    downstream_cx_destroy: store.counter(p + 'downstream_cx_destroy'),
    downstream_cx_destroy_remote: store.counter(p + 'downstream_cx_destroy_remote'),
    downstream_cx_destroy_local: store.counter(p + 'downstream_cx_destroy_local'),
    downstream_cx_length_ms: store.histogram(p + 'downstream_cx_length_ms'),
    downstream_cx_protocol_error: store.counter(p + 'downstream_cx_protocol_error'),
    downstream_rq_total: store.counter(p + 'downstream_rq_total'),
    downstream_rq_http1_total: store.counter(p + 'downstream_rq_http1_total'),
    downstream_rq_http2_total: store.counter(p + 'downstream_rq_http2_total'),
    downstream_rq_active: store.gauge(p + 'downstream_rq_active'),
    downstream_rq_completed: store.counter(p + 'downstream_rq_completed'),
    downstream_rq_rx_reset: store.counter(p + 'downstream_rq_rx_reset'),
    downstream_rq_tx_reset: store.counter(p + 'downstream_rq_tx_reset'),
    downstream_rq_timeout: store.counter(p + 'downstream_rq_timeout'),
    downstream_rq_non_relative_path: store.counter(p + 'downstream_rq_non_relative_path'),
    downstream_rq_ws_on_non_ws_route: store.counter(p + 'downstream_rq_ws_on_non_ws_route'),
    downstream_rq_idle_timeout: store.counter(p + 'downstream_rq_idle_timeout'),
    downstream_cx_upgrades_total: store.counter(p + 'downstream_cx_upgrades_total'),
    downstream_cx_upgrades_active: store.gauge(p + 'downstream_cx_upgrades_active'),
    downstream_rq_time: store.histogram(p + 'downstream_rq_time'),
    downstream_rq_xx: [1, 2, 3, 4, 5].map((c) => store.counter(`${p}downstream_rq_${c}xx`)),
    listener_rq_xx: [1, 2, 3, 4, 5].map((c) => store.counter(`${lp}downstream_rq_${c}xx`)),
    listener_rq_completed: store.counter(lp + 'downstream_rq_completed'),
  };
}
