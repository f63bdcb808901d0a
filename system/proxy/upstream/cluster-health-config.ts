// The health and balancing parts of a Cluster compiled (cluster-config.ts calls them): health_checks (Envoy's
// HealthCheck, api config/core/v3/health_check.proto; run by health-checker.ts), outlier_detection (api
// config/cluster/v3/outlier_detection.proto; run by outlier-detector.ts) and ring_hash_lb_config (hash-lb.ts), with
// Envoy's defaults. Throws ConfigError with the reason a NACK carries. Kept apart from the runtimes so the cluster
// config does not import the host.
import { ConfigError, durationMs } from '../config/errors.ts';

type J = Record<string, any>;

export interface HealthCheckSpec {
  timeoutMs: number;
  intervalMs: number;
  noTrafficIntervalMs: number;
  unhealthyIntervalMs: number;
  unhealthyEdgeIntervalMs: number;
  healthyEdgeIntervalMs: number;
  unhealthyThreshold: number;
  healthyThreshold: number;
  path: string;
  /** Host header; empty: the cluster's name. */
  host: string;
  method: string;
  /** [start, end) ranges of statuses that pass. */
  expected: Array<[number, number]>;
  reuseConnection: boolean;
}

function ranges(list: J[] | undefined, where: string): Array<[number, number]> {
  if (!list || list.length === 0) return [[200, 201]];
  return list.map((r, i) => {
    const start = Number(r.start ?? 0);
    const end = Number(r.end ?? 0);
    if (start < 100 || end > 600 || start >= end) {
      throw new ConfigError(
        `${where}.expected_statuses[${i}]: Invalid http expected status range: expecting start < end, got [${start}, ${end})`,
      );
    }
    return [start, end];
  });
}

/** The cluster's health_checks (canonical JSON) compiled; undefined when it has none. Throws ConfigError. */
export function compileHealthChecks(list: J[] | undefined, cluster: string): HealthCheckSpec | undefined {
  if (!list || list.length === 0) return undefined;
  const where = `cluster ${cluster}: health_checks[0]`;
  if (list.length > 1) throw new ConfigError(`cluster ${cluster}: Multiple health checks not supported`);
  const hc = list[0]!;
  for (const k of ['tcp_health_check', 'grpc_health_check', 'custom_health_check']) {
    if (hc[k]) throw new ConfigError(`${where}.${k}: only http_health_check is supported`);
  }
  const h = hc.http_health_check as J | undefined;
  if (!h) throw new ConfigError(`${where}: a health checker is required (http_health_check)`);
  if (h.send || h.receive?.length) throw new ConfigError(`${where}.http_health_check: send/receive are not supported`);
  if (h.codec_client_type && h.codec_client_type !== 'HTTP1')
    throw new ConfigError(`${where}.http_health_check.codec_client_type: only HTTP1 is supported`);
  const intervalMs = durationMs(hc.interval) ?? 0;
  const unhealthy = durationMs(hc.unhealthy_interval) ?? intervalMs;
  return {
    timeoutMs: durationMs(hc.timeout) ?? 1000,
    intervalMs,
    noTrafficIntervalMs: durationMs(hc.no_traffic_interval) ?? 60_000,
    unhealthyIntervalMs: unhealthy,
    unhealthyEdgeIntervalMs: durationMs(hc.unhealthy_edge_interval) ?? unhealthy,
    healthyEdgeIntervalMs: durationMs(hc.healthy_edge_interval) ?? intervalMs,
    unhealthyThreshold: Math.max(1, Number(hc.unhealthy_threshold ?? 1)),
    healthyThreshold: Math.max(1, Number(hc.healthy_threshold ?? 1)),
    path: String(h.path ?? '/'),
    host: String(h.host ?? ''),
    method: String(h.method ?? 'GET') === 'METHOD_UNSPECIFIED' ? 'GET' : String(h.method ?? 'GET'),
    expected: ranges(h.expected_statuses, `${where}.http_health_check`),
    reuseConnection: hc.reuse_connection !== false,
  };
}

export interface OutlierSpec {
  consecutive5xx: number;
  consecutiveGatewayFailure: number;
  intervalMs: number;
  baseEjectionMs: number;
  maxEjectionMs: number;
  maxEjectionPercent: number;
  enforcing5xx: number;
  enforcingGatewayFailure: number;
  alwaysEjectOneHost: boolean;
}

/** A UInt32Value (canonical JSON: the number itself) with its default. */
const uint = (v: number | undefined, d: number): number => (v === undefined ? d : Number(v));

/** A cluster's outlier_detection (canonical JSON) compiled; undefined when it has none. Throws ConfigError. */
export function compileOutlierDetection(o: J | undefined, cluster: string): OutlierSpec | undefined {
  if (!o) return undefined;
  const where = `cluster ${cluster}: outlier_detection`;
  for (const k of ['enforcing_failure_percentage', 'enforcing_failure_percentage_local_origin']) {
    if (uint(o[k], 0) > 0) throw new ConfigError(`${where}.${k}: failure percentage detection is not supported`);
  }
  if (o.split_external_local_origin_errors === true)
    throw new ConfigError(`${where}.split_external_local_origin_errors is not supported`);
  const base = durationMs(o.base_ejection_time) ?? 30_000;
  return {
    consecutive5xx: uint(o.consecutive_5xx, 5),
    consecutiveGatewayFailure: uint(o.consecutive_gateway_failure, 5),
    intervalMs: durationMs(o.interval) ?? 10_000,
    baseEjectionMs: base,
    maxEjectionMs: Math.max(durationMs(o.max_ejection_time) ?? 300_000, base),
    maxEjectionPercent: uint(o.max_ejection_percent, 10),
    enforcing5xx: uint(o.enforcing_consecutive_5xx, 100),
    enforcingGatewayFailure: uint(o.enforcing_consecutive_gateway_failure, 0),
    alwaysEjectOneHost: o.always_eject_one_host === true,
  };
}

export interface RingSpec {
  minimumRingSize: number;
  maximumRingSize: number;
}

export function compileRingHash(c: J | undefined, cluster: string): RingSpec {
  const min = Number(c?.minimum_ring_size ?? 1024);
  const max = Number(c?.maximum_ring_size ?? 8_388_608);
  if (c?.hash_function === 'MURMUR_HASH_2')
    throw new ConfigError(`cluster ${cluster}: ring_hash_lb_config.hash_function MURMUR_HASH_2 is not supported`);
  if (min > max)
    throw new ConfigError(`cluster ${cluster}: ring hash: minimum_ring_size (${min}) > maximum_ring_size (${max})`);
  return { minimumRingSize: min, maximumRingSize: max };
}
