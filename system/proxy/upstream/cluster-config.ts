// A Cluster resource validated and compiled into what the runtime needs (Envoy's ClusterInfo): type, load
// balancing policy, timeouts, circuit breaker thresholds, DNS settings and the endpoints of its load_assignment; and
// the ClusterLoadAssignment parsing EDS shares. Throws ConfigError with the reason a NACK carries.
import net from 'node:net';
import { ConfigError, durationMs } from '../config/errors.ts';
import { compileHttp2Options, type Http2Options } from '../config/http2-options.ts';
import {
  compileHealthChecks,
  compileOutlierDetection,
  compileRingHash,
  type HealthCheckSpec,
  type OutlierSpec,
  type RingSpec,
} from './cluster-health-config.ts';
import { compileUpstreamTls, type UpstreamTls } from './tls-transport.ts';

type J = Record<string, any>;

export type HealthStatus = 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'TIMEOUT' | 'DEGRADED';
export type ClusterType = 'STATIC' | 'STRICT_DNS' | 'LOGICAL_DNS' | 'EDS';
export type LbPolicy = 'ROUND_ROBIN' | 'LEAST_REQUEST' | 'RANDOM' | 'RING_HASH' | 'MAGLEV';
const LB_POLICIES = ['ROUND_ROBIN', 'LEAST_REQUEST', 'RANDOM', 'RING_HASH', 'MAGLEV'];

export interface Thresholds {
  maxConnections: number;
  maxPendingRequests: number;
  maxRequests: number;
  maxRetries: number;
  trackRemaining: boolean;
}

export interface EndpointSpec {
  address: string;
  port: number;
  hostname: string;
  health: HealthStatus;
  weight: number;
  priority: number;
  locality: J | undefined;
  metadata: J | undefined;
}

export interface ClusterSpec {
  name: string;
  type: ClusterType;
  lbPolicy: LbPolicy;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxRequestsPerConnection: number;
  edsServiceName: string;
  thresholds: Thresholds;
  panicThreshold: number;
  choiceCount: number;
  dnsRefreshMs: number;
  dnsFamily: 0 | 4 | 6;
  /** Endpoints from load_assignment (STATIC; names to resolve for DNS types). */
  endpoints: EndpointSpec[];
  /** The cluster speaks HTTP/2 to its endpoints (h2c in the clear): upstream/http2-client.ts. */
  http2: boolean;
  http2Options: Http2Options;
  /** TLS to the hosts (transport_socket UpstreamTlsContext); absent: plaintext. */
  tls?: UpstreamTls;
  /** Active HTTP health checking (health_checks[0]); absent: none. */
  healthCheck?: HealthCheckSpec;
  /** Outlier detection (outlier_detection); absent: none. */
  outlier?: OutlierSpec;
  /** RING_HASH's ring sizes (ring_hash_lb_config). */
  ring: RingSpec;
  /** per_connection_buffer_limit_bytes (1 MiB by default): accepted and shown; Node's socket buffers are not bound by it. */
  bufferLimitBytes: number;
  json: J;
}

const DEFAULT_THRESHOLDS: Thresholds = {
  maxConnections: 1024,
  maxPendingRequests: 1024,
  maxRequests: 1024,
  maxRetries: 3,
  trackRemaining: false,
};

function socketAddress(a: J | undefined, where: string): { address: string; port: number } {
  const sa = a?.socket_address;
  if (!sa) {
    if (a?.pipe) throw new ConfigError(`${where}.pipe: unix domain socket endpoints are not supported`);
    throw new ConfigError(`${where}.socket_address: value is required`);
  }
  if (sa.named_port) throw new ConfigError(`${where}.socket_address.named_port: not supported`);
  if (sa.protocol === 'UDP') throw new ConfigError(`${where}.socket_address.protocol: UDP is not supported`);
  const port = Number(sa.port_value ?? 0);
  return { address: String(sa.address ?? ''), port };
}

/** Endpoints of a ClusterLoadAssignment (canonical JSON), flattened with their priority. */
export function parseLoadAssignment(cla: J | undefined, where: string): EndpointSpec[] {
  const out: EndpointSpec[] = [];
  ((cla?.endpoints ?? []) as J[]).forEach((loc, li) => {
    ((loc.lb_endpoints ?? []) as J[]).forEach((ep, ei) => {
      const here = `${where}.endpoints[${li}].lb_endpoints[${ei}]`;
      if (ep.endpoint_name) throw new ConfigError(`${here}.endpoint_name: named endpoints are not supported`);
      const { address, port } = socketAddress(ep.endpoint?.address, `${here}.endpoint.address`);
      out.push({
        address,
        port,
        hostname: ep.endpoint?.hostname ?? '',
        health: (ep.health_status as HealthStatus) ?? 'UNKNOWN',
        weight: ep.load_balancing_weight ?? 1,
        priority: loc.priority ?? 0,
        locality: loc.locality,
        metadata: ep.metadata,
      });
    });
  });
  return out;
}

/**
 * The upstream protocol as Envoy reads it (envoy/extensions/upstreams/http/v3/http_protocol_options.proto):
 * `explicit_http_config.http2_protocol_options` (or the deprecated Cluster.http2_protocol_options) → HTTP/2, its
 * options returned; `http_protocol_options` or nothing → HTTP/1.1 (undefined). What this proxy cannot honour is
 * refused: HTTP/3, auto_config (ALPN to upstreams) and use_downstream_protocol_config.
 */
function upstreamHttp2(name: string, c: J, o: J | undefined): J | undefined {
  const where = `cluster ${name}: typed_extension_protocol_options[envoy.extensions.upstreams.http.v3.HttpProtocolOptions]`;
  if (o?.explicit_http_config?.http3_protocol_options)
    throw new ConfigError(`${where}: HTTP/3 upstreams are not supported`);
  if (o?.auto_config) throw new ConfigError(`${where}.auto_config is not supported (ALPN to upstreams)`);
  if (o?.use_downstream_protocol_config)
    throw new ConfigError(`${where}.use_downstream_protocol_config is not supported`);
  return o?.explicit_http_config?.http2_protocol_options ?? c.http2_protocol_options;
}

function panicThreshold(p: J | undefined): number {
  return p === undefined ? 50 : Number(p.value ?? 0);
}

function optional<K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
}

/** Validates a Cluster (canonical JSON) and returns what the runtime needs; throws ConfigError. */
export function compileCluster(c: J): ClusterSpec {
  const name = String(c.name ?? '');
  if (!name) throw new ConfigError('name: value length must be at least 1 characters');
  if (c.cluster_type) throw new ConfigError(`cluster ${name}: custom cluster types are not supported`);
  const type = (c.type ?? 'STATIC') as string;
  if (!['STATIC', 'STRICT_DNS', 'LOGICAL_DNS', 'EDS'].includes(type)) {
    throw new ConfigError(
      `cluster ${name}: cluster type ${type} is not supported (STATIC, STRICT_DNS, LOGICAL_DNS, EDS)`,
    );
  }
  const lb = (c.lb_policy ?? 'ROUND_ROBIN') as string;
  if (!LB_POLICIES.includes(lb)) {
    throw new ConfigError(`cluster ${name}: lb_policy ${lb} is not supported (${LB_POLICIES.join(', ')})`);
  }
  if (c.load_balancing_policy)
    throw new ConfigError(`cluster ${name}: load_balancing_policy extensions are not supported`);
  const tls = compileUpstreamTls(c.transport_socket, name);
  if (tls && (c.http2_protocol_options || c.typed_extension_protocol_options))
    throw new ConfigError(`cluster ${name}: HTTP/2 over TLS to upstreams is not supported (h2c or HTTP/1.1 over TLS)`);
  if (type === 'EDS' && c.load_assignment) {
    // Envoy ignores load_assignment for EDS clusters; keep it that way.
  }
  if (type !== 'EDS' && c.eds_cluster_config) {
    throw new ConfigError(`cluster ${name}: eds_cluster_config is only valid for EDS clusters`);
  }
  if (type === 'EDS') {
    const src = c.eds_cluster_config?.eds_config;
    if (!src) throw new ConfigError(`cluster ${name}: eds_cluster_config.eds_config is required for EDS clusters`);
    if (!src.ads && !src.api_config_source) {
      throw new ConfigError(`cluster ${name}: eds_config must use ADS (config source ${Object.keys(src).join(',')})`);
    }
  }
  const thresholds = { ...DEFAULT_THRESHOLDS };
  for (const t of (c.circuit_breakers?.thresholds ?? []) as J[]) {
    if ((t.priority ?? 'DEFAULT') !== 'DEFAULT') continue;
    if (t.max_connections !== undefined) thresholds.maxConnections = t.max_connections;
    if (t.max_pending_requests !== undefined) thresholds.maxPendingRequests = t.max_pending_requests;
    if (t.max_requests !== undefined) thresholds.maxRequests = t.max_requests;
    if (t.max_retries !== undefined) thresholds.maxRetries = t.max_retries;
    thresholds.trackRemaining = t.track_remaining === true;
  }
  const httpOpts = c.typed_extension_protocol_options?.['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
  const http2Json = upstreamHttp2(name, c, httpOpts);
  const common = httpOpts?.common_http_protocol_options ?? c.common_http_protocol_options;
  const endpoints = type === 'EDS' ? [] : parseLoadAssignment(c.load_assignment, 'load_assignment');
  if (type === 'LOGICAL_DNS' && endpoints.length !== 1) {
    throw new ConfigError(
      `cluster ${name}: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`,
    );
  }
  if (type === 'STATIC') {
    for (const e of endpoints) {
      if (net.isIP(e.address) === 0) {
        throw new ConfigError(
          `malformed IP address: ${e.address}. Consider setting resolver_name or setting cluster type to 'STRICT_DNS' or 'LOGICAL_DNS'`,
        );
      }
    }
  }
  const family = c.dns_lookup_family;
  return {
    name,
    type: type as ClusterType,
    lbPolicy: lb as LbPolicy,
    connectTimeoutMs: durationMs(c.connect_timeout) ?? 5000,
    idleTimeoutMs: durationMs(common?.idle_timeout) ?? 3_600_000,
    maxRequestsPerConnection: common?.max_requests_per_connection ?? c.max_requests_per_connection ?? 0,
    edsServiceName: c.eds_cluster_config?.service_name || name,
    thresholds,
    // A Percent of 0 arrives as `{}` in canonical JSON (proto3 omits the default): present means its value or 0.
    panicThreshold: panicThreshold(c.common_lb_config?.healthy_panic_threshold),
    choiceCount: c.least_request_lb_config?.choice_count ?? 2,
    dnsRefreshMs: durationMs(c.dns_refresh_rate) ?? 5000,
    dnsFamily: family === 'V4_ONLY' ? 4 : family === 'V6_ONLY' ? 6 : 0,
    endpoints,
    http2: http2Json !== undefined,
    http2Options: compileHttp2Options(http2Json, `cluster ${name}: http2_protocol_options`),
    ...(tls ? { tls } : {}),
    ...optional('healthCheck', compileHealthChecks(c.health_checks, name)),
    ...optional('outlier', compileOutlierDetection(c.outlier_detection, name)),
    ring: compileRingHash(c.ring_hash_lb_config, name),
    bufferLimitBytes: c.per_connection_buffer_limit_bytes ?? 1_048_576,
    json: c,
  };
}
