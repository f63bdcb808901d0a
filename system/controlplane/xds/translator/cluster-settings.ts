// A BackendConfigPolicy's settings (ClusterIR.backendConfig) → the Envoy Cluster fields that carry them, as Envoy
// Gateway and kgateway write them (envoy/config/cluster/v3/{cluster,circuit_breaker,outlier_detection}.proto,
// config/core/v3/health_check.proto, extensions/upstreams/http/v3/http_protocol_options.proto): connect_timeout,
// per_connection_buffer_limit_bytes, lb_policy with least_request_lb_config / ring_hash_lb_config,
// common_lb_config.healthy_panic_threshold, health_checks[0].http_health_check, outlier_detection, the DEFAULT
// priority's circuit_breakers.thresholds, HttpProtocolOptions (HTTP/1 options on an HTTP/1.1 cluster, HTTP/2 ones on
// an HTTP/2 cluster), and the provenance: `metadata.filter_metadata["merge.BackendConfigPolicy.gateway.gwvendor.dev"]`
// names the policy of each setting, as routes name their TrafficPolicies. The route hash_policy a consistent-hash
// cluster needs is the route's (routeHashPolicy, used by route.ts).
import type { BackendConfigIR, ClusterIR, HashPolicyIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

/** The filter_metadata key under which a cluster names the BackendConfigPolicy of each setting. */
export const CLUSTER_PROVENANCE_KEY = 'merge.BackendConfigPolicy.gateway.gwvendor.dev';

const SETTING_NAMES: Record<Exclude<keyof BackendConfigIR, 'policy'>, string> = {
  connectTimeout: 'connectTimeout',
  perConnectionBufferLimitBytes: 'perConnectionBufferLimitBytes',
  http1: 'http1ProtocolOptions',
  http2: 'http2ProtocolOptions',
  loadBalancer: 'loadBalancer',
  healthCheck: 'healthCheck',
  outlierDetection: 'outlierDetection',
  circuitBreakers: 'circuitBreakers',
};

function healthChecks(h: NonNullable<BackendConfigIR['healthCheck']>): Json[] {
  const http: Json = { path: h.path };
  if (h.host) http.host = h.host;
  if (h.method) http.method = h.method;
  if (h.expectedStatuses)
    http.expected_statuses = h.expectedStatuses.map((s) => ({ start: String(s), end: String(s + 1) }));
  return [
    {
      timeout: h.timeout,
      interval: h.interval,
      unhealthy_threshold: h.unhealthyThreshold,
      healthy_threshold: h.healthyThreshold,
      http_health_check: http,
    },
  ];
}

function loadBalancing(lb: NonNullable<BackendConfigIR['loadBalancer']>): Json {
  const out: Json = {};
  if (lb.policy && lb.policy !== 'ROUND_ROBIN') out.lb_policy = lb.policy;
  if (lb.choiceCount !== undefined) out.least_request_lb_config = { choice_count: lb.choiceCount };
  if (lb.minimumRingSize !== undefined || lb.maximumRingSize !== undefined) {
    out.ring_hash_lb_config = {
      ...(lb.minimumRingSize !== undefined ? { minimum_ring_size: String(lb.minimumRingSize) } : {}),
      ...(lb.maximumRingSize !== undefined ? { maximum_ring_size: String(lb.maximumRingSize) } : {}),
    };
  }
  // Canonical JSON leaves a 0 out: `{}` is a Percent of 0 (the proxy reads it so, as Envoy does).
  if (lb.healthyPanicThreshold !== undefined)
    out.common_lb_config = {
      healthy_panic_threshold: lb.healthyPanicThreshold ? { value: lb.healthyPanicThreshold } : {},
    };
  return out;
}

function outlier(o: NonNullable<BackendConfigIR['outlierDetection']>): Json {
  const out: Json = {};
  if (o.consecutive5xx !== undefined) out.consecutive_5xx = o.consecutive5xx;
  if (o.interval) out.interval = o.interval;
  if (o.baseEjectionTime) out.base_ejection_time = o.baseEjectionTime;
  if (o.maxEjectionPercent !== undefined) out.max_ejection_percent = o.maxEjectionPercent;
  return out;
}

function circuitBreakers(cb: NonNullable<BackendConfigIR['circuitBreakers']>): Json {
  const t: Json = {};
  if (cb.maxConnections !== undefined) t.max_connections = cb.maxConnections;
  if (cb.maxPendingRequests !== undefined) t.max_pending_requests = cb.maxPendingRequests;
  if (cb.maxRequests !== undefined) t.max_requests = cb.maxRequests;
  if (cb.maxRetries !== undefined) t.max_retries = cb.maxRetries;
  if (cb.trackRemaining) t.track_remaining = true;
  return { thresholds: [t] };
}

/** The HTTP/1 options of an HTTP/1.1 cluster (explicit_http_config.http_protocol_options). */
export function http1Options(h: BackendConfigIR['http1']): Json | undefined {
  if (!h) return undefined;
  const out: Json = {};
  if (h.enableTrailers !== undefined) out.enable_trailers = h.enableTrailers;
  if (h.overrideStreamErrorOnInvalidHttpMessage !== undefined)
    out.override_stream_error_on_invalid_http_message = h.overrideStreamErrorOnInvalidHttpMessage;
  return out;
}

/** The HTTP/2 options a policy sets, over the cluster's defaults (explicit_http_config.http2_protocol_options). */
export function http2Options(h: BackendConfigIR['http2']): Json {
  if (!h) return {};
  const out: Json = {};
  if (h.maxConcurrentStreams !== undefined) out.max_concurrent_streams = h.maxConcurrentStreams;
  if (h.initialStreamWindowSize !== undefined) out.initial_stream_window_size = h.initialStreamWindowSize;
  if (h.initialConnectionWindowSize !== undefined) out.initial_connection_window_size = h.initialConnectionWindowSize;
  return out;
}

/** The Cluster fields of a cluster's BackendConfigPolicy (none without one); protocol options are cluster.ts's. */
export function clusterSettings(c: ClusterIR): Json {
  const s = c.backendConfig;
  if (!s) return {};
  const out: Json = {};
  if (s.connectTimeout) out.connect_timeout = s.connectTimeout;
  if (s.perConnectionBufferLimitBytes !== undefined)
    out.per_connection_buffer_limit_bytes = s.perConnectionBufferLimitBytes;
  if (s.loadBalancer) Object.assign(out, loadBalancing(s.loadBalancer));
  if (s.healthCheck) out.health_checks = healthChecks(s.healthCheck);
  if (s.outlierDetection) out.outlier_detection = outlier(s.outlierDetection);
  if (s.circuitBreakers) out.circuit_breakers = circuitBreakers(s.circuitBreakers);
  const prov = Object.fromEntries(
    (Object.keys(SETTING_NAMES) as (keyof typeof SETTING_NAMES)[])
      .filter(
        (k) =>
          s[k] !== undefined &&
          !(k === 'http2' && c.protocol !== 'http2') &&
          !(k === 'http1' && c.protocol === 'http2'),
      )
      .map((k) => [SETTING_NAMES[k], s.policy]),
  );
  out.metadata = { filter_metadata: { [CLUSTER_PROVENANCE_KEY]: prov } };
  return out;
}

/** The route hash_policy for a consistent-hash cluster (RING_HASH, MAGLEV with hashPolicies); undefined otherwise. */
export function routeHashPolicy(c: ClusterIR | undefined): Json[] | undefined {
  const lb = c?.backendConfig?.loadBalancer;
  if (!lb?.hashPolicies || (lb.policy !== 'RING_HASH' && lb.policy !== 'MAGLEV')) return undefined;
  return lb.hashPolicies.map((h: HashPolicyIR) => {
    const terminal = h.terminal ? { terminal: true } : {};
    if ('header' in h) return { header: { header_name: h.header }, ...terminal };
    if ('queryParameter' in h) return { query_parameter: { name: h.queryParameter }, ...terminal };
    return { connection_properties: { source_ip: true }, ...terminal };
  });
}
