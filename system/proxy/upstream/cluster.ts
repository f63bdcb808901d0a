// An upstream cluster: its validated config, its hosts (from load_assignment, DNS or EDS), load balancing, circuit
// breakers, per-host connection pools and Envoy's cluster.<name>.* stats.
import dns from 'node:dns';
import net from 'node:net';
import { ConfigError, durationMs } from '../config/errors.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats.ts';
import { ConnPool } from './pool.ts';
import type { HealthStatus } from './types.ts';

type J = Record<string, any>;

export type ClusterType = 'STATIC' | 'STRICT_DNS' | 'LOGICAL_DNS' | 'EDS';
export type LbPolicy = 'ROUND_ROBIN' | 'LEAST_REQUEST' | 'RANDOM';

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
  /** true when the cluster carries HTTP/2 protocol options (only the xDS client may use those). */
  http2: boolean;
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
  if (!['ROUND_ROBIN', 'LEAST_REQUEST', 'RANDOM'].includes(lb)) {
    throw new ConfigError(`cluster ${name}: lb_policy ${lb} is not supported (ROUND_ROBIN, LEAST_REQUEST, RANDOM)`);
  }
  if (c.load_balancing_policy)
    throw new ConfigError(`cluster ${name}: load_balancing_policy extensions are not supported`);
  if (c.transport_socket && !String(c.transport_socket.typed_config?.['@type'] ?? '').endsWith('RawBuffer')) {
    throw new ConfigError(
      `cluster ${name}: transport_socket ${c.transport_socket.name ?? ''}: TLS upstreams are not supported`,
    );
  }
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
  const http2 = !!(
    c.http2_protocol_options ||
    httpOpts?.explicit_http_config?.http2_protocol_options ||
    httpOpts?.use_downstream_protocol_config
  );
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
    panicThreshold: c.common_lb_config?.healthy_panic_threshold?.value ?? 50,
    choiceCount: c.least_request_lb_config?.choice_count ?? 2,
    dnsRefreshMs: durationMs(c.dns_refresh_rate) ?? 5000,
    dnsFamily: family === 'V4_ONLY' ? 4 : family === 'V6_ONLY' ? 6 : 0,
    endpoints,
    http2,
    json: c,
  };
}

export class Host {
  readonly address: string;
  readonly port: number;
  readonly key: string;
  hostname: string;
  health: HealthStatus;
  weight: number;
  priority: number;
  locality: J | undefined;
  metadata: J | undefined;
  readonly stats = {
    cx_total: 0,
    cx_active: 0,
    cx_connect_fail: 0,
    rq_total: 0,
    rq_active: 0,
    rq_error: 0,
    rq_success: 0,
    rq_timeout: 0,
  };
  pool: ConnPool | undefined;
  /** Smooth weighted round robin state. */
  current = 0;

  constructor(e: EndpointSpec) {
    this.address = e.address;
    this.port = e.port;
    this.key = net.isIPv6(e.address) ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
    this.hostname = e.hostname;
    this.health = e.health;
    this.weight = e.weight;
    this.priority = e.priority;
    this.locality = e.locality;
    this.metadata = e.metadata;
  }

  get healthy(): boolean {
    return this.health === 'HEALTHY' || this.health === 'UNKNOWN';
  }
}

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

/** Counts against the circuit breakers (Envoy's ResourceManager for the DEFAULT priority). */
export class Resources {
  connections = 0;
  pendingRequests = 0;
  requests = 0;
  retries = 0;
  readonly t: Thresholds;
  constructor(t: Thresholds) {
    this.t = t;
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
}

export interface ClusterDeps {
  stats: StatsStore;
  logs: LogRegistry;
  connectionIds: () => number;
  addedViaApi: boolean;
}

export class Cluster {
  readonly spec: ClusterSpec;
  readonly name: string;
  readonly addedViaApi: boolean;
  readonly stats: ClusterStats;
  readonly resources: Resources;
  readonly logs: LogRegistry;
  readonly connectionIds: () => number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxRequestsPerConnection: number;
  private readonly upstreamLog: Logger;
  hosts: Host[] = [];
  private byPriority: Host[][] = [];
  private rr = 0;
  /** Resolves when the cluster has its first host set (EDS: first assignment; DNS: first resolution). */
  readonly initialized: Promise<void>;
  private markInitialized!: () => void;
  isInitialized = false;
  /** The ClusterLoadAssignment in effect (EDS), for config_dump?include_eds. */
  loadAssignment: J | undefined;
  private dnsTimer: NodeJS.Timeout | undefined;
  private destroyed = false;
  private readonly cbGauges: Record<string, Gauge>;

  constructor(spec: ClusterSpec, deps: ClusterDeps) {
    this.spec = spec;
    this.name = spec.name;
    this.addedViaApi = deps.addedViaApi;
    this.logs = deps.logs;
    this.connectionIds = deps.connectionIds;
    this.connectTimeoutMs = spec.connectTimeoutMs;
    this.idleTimeoutMs = spec.idleTimeoutMs;
    this.maxRequestsPerConnection = spec.maxRequestsPerConnection;
    this.upstreamLog = deps.logs.logger('upstream');
    this.resources = new Resources(spec.thresholds);
    this.statsStore = deps.stats;
    const prefix = `cluster.${spec.name}.`;
    const s: Record<string, Counter | Gauge | Histogram> = {};
    for (const k of COUNTERS) s[k] = deps.stats.counter(prefix + k);
    for (const k of GAUGES) s[k] = deps.stats.gauge(prefix + k);
    s.upstream_cx_connect_ms = deps.stats.histogram(prefix + 'upstream_cx_connect_ms');
    s.upstream_cx_length_ms = deps.stats.histogram(prefix + 'upstream_cx_length_ms');
    s.upstream_rq_time = deps.stats.histogram(prefix + 'upstream_rq_time');
    this.stats = s as ClusterStats;
    const cb = `${prefix}circuit_breakers.default.`;
    this.cbGauges = {
      cx_open: deps.stats.gauge(cb + 'cx_open'),
      cx_pool_open: deps.stats.gauge(cb + 'cx_pool_open'),
      rq_open: deps.stats.gauge(cb + 'rq_open'),
      rq_pending_open: deps.stats.gauge(cb + 'rq_pending_open'),
      rq_retry_open: deps.stats.gauge(cb + 'rq_retry_open'),
    };
    if (spec.thresholds.trackRemaining) {
      for (const k of ['remaining_cx', 'remaining_pending', 'remaining_rq', 'remaining_retries']) {
        this.cbGauges[k] = deps.stats.gauge(cb + k);
      }
    }
    this.initialized = new Promise((resolve) => {
      this.markInitialized = resolve;
    });
    if (spec.type === 'STATIC') {
      this.setHosts(spec.endpoints);
      this.initDone();
    } else if (spec.type === 'STRICT_DNS' || spec.type === 'LOGICAL_DNS') {
      this.resolveDns();
    }
  }

  private initDone(): void {
    if (this.isInitialized) return;
    this.isInitialized = true;
    this.markInitialized();
  }

  /** EDS: a new assignment for this cluster. */
  applyLoadAssignment(cla: J): void {
    const endpoints = parseLoadAssignment(cla, 'endpoints');
    this.loadAssignment = cla;
    this.setHosts(endpoints);
    this.initDone();
  }

  /** Replaces the host set, keeping Host objects (and their pools) for addresses that stay. */
  setHosts(endpoints: EndpointSpec[]): void {
    const old = new Map(this.hosts.map((h) => [h.key, h]));
    const next: Host[] = [];
    for (const e of endpoints) {
      const probe = new Host(e);
      const kept = old.get(probe.key);
      if (kept && !next.includes(kept)) {
        kept.health = e.health;
        kept.weight = e.weight;
        kept.priority = e.priority;
        kept.hostname = e.hostname;
        kept.locality = e.locality;
        kept.metadata = e.metadata;
        old.delete(probe.key);
        next.push(kept);
      } else {
        next.push(probe);
      }
    }
    for (const gone of old.values()) gone.pool?.close();
    const changed = old.size > 0 || next.length !== this.hosts.length || next.some((h, i) => h !== this.hosts[i]);
    this.hosts = next;
    this.byPriority = [];
    for (const h of next) {
      this.byPriority[h.priority] ??= [];
      this.byPriority[h.priority]!.push(h);
    }
    if (changed) this.stats.membership_change.inc();
    this.stats.membership_total.set(next.length);
    this.stats.membership_healthy.set(next.filter((h) => h.healthy).length);
    this.stats.membership_degraded.set(next.filter((h) => h.health === 'DEGRADED').length);
    this.stats.max_host_weight.set(next.reduce((m, h) => Math.max(m, h.weight), 0));
  }

  /**
   * STRICT_DNS / LOGICAL_DNS: resolves every name of load_assignment, then again every dns_refresh_rate. As in
   * Envoy's ResolveTarget, each name counts update_attempt, then update_success or update_failure; the cluster is
   * initialized after the first round whatever its outcome (an unresolvable name leaves it without hosts: 503 "no
   * healthy upstream"), and a failed lookup keeps the hosts of that name's last good answer.
   */
  private resolveDns(): void {
    if (this.destroyed) return;
    const dnsLog = this.logs.logger('dns');
    const targets = this.spec.endpoints;
    Promise.all(
      targets.map(async (e) => {
        if (net.isIP(e.address)) return [e];
        this.stats.update_attempt.inc();
        dnsLog.debug(`dns resolution for ${e.address} started`);
        try {
          const found = await dns.promises.lookup(e.address, { all: true, family: this.spec.dnsFamily });
          this.stats.update_success.inc();
          dnsLog.debug(`dns resolution for ${e.address} completed with status 0`);
          const list = this.spec.type === 'LOGICAL_DNS' ? found.slice(0, 1) : found;
          return list.map((a) => ({ ...e, address: a.address, hostname: e.address }));
        } catch (err) {
          this.stats.update_failure.inc();
          dnsLog.debug(`dns resolution for ${e.address} failed: ${(err as NodeJS.ErrnoException).code}`);
          return undefined;
        }
      }),
    ).then((results) => {
      if (this.destroyed) return;
      const next: EndpointSpec[] = [];
      results.forEach((r, i) => {
        if (r) next.push(...r);
        else {
          // The kept hosts carry the name as their hostname again, so that a second failure in a row still finds
          // them (with the endpoint's own hostname, often empty, the name's hosts were dropped on the next failure).
          const name = targets[i]!.address;
          for (const h of this.hosts)
            if (h.hostname === name) next.push({ ...targets[i]!, address: h.address, hostname: name });
        }
      });
      if (results.some((r) => r !== undefined) || this.isInitialized) this.setHosts(next);
      this.initDone();
      this.dnsTimer = setTimeout(() => this.resolveDns(), this.spec.dnsRefreshMs);
      this.dnsTimer.unref();
    });
  }

  /** Picks a host for a request (Envoy's load balancer with healthy-panic); undefined means "no healthy upstream". */
  chooseHost(): Host | undefined {
    // The first priority with a healthy host takes the traffic (no spill-over between priorities); when its
    // healthy share is under the panic threshold, Envoy balances across all of its hosts instead.
    let candidates: Host[] | undefined;
    let panic = false;
    for (const hosts of this.byPriority) {
      if (!hosts || hosts.length === 0) continue;
      const healthy = hosts.filter((h) => h.healthy);
      if (healthy.length === 0) continue;
      if ((healthy.length * 100) / hosts.length < this.spec.panicThreshold) {
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
      else if (this.spec.panicThreshold > 0) {
        candidates = this.byPriority.find((h) => h && h.length > 0)!;
        panic = true;
      } else return undefined;
    }
    if (panic) this.stats.lb_healthy_panic.inc();
    if (candidates.length === 1) return candidates[0];
    switch (this.spec.lbPolicy) {
      case 'RANDOM':
        return candidates[Math.floor(Math.random() * candidates.length)];
      case 'LEAST_REQUEST':
        return leastRequest(candidates, this.spec.choiceCount);
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

  private readonly codeCounters = new Map<number, Counter>();
  private statsStore!: StatsStore;

  /** Counts a response code in upstream_rq_<code> and upstream_rq_<class>xx (Envoy's chargeUpstreamCode). */
  chargeCode(status: number): void {
    let c = this.codeCounters.get(status);
    if (!c) {
      c = this.statsStore.counter(`cluster.${this.name}.upstream_rq_${status}`);
      this.codeCounters.set(status, c);
    }
    c.inc();
    const cls = Math.floor(status / 100);
    let x = this.codeCounters.get(cls);
    if (!x) {
      x = this.statsStore.counter(`cluster.${this.name}.upstream_rq_${cls}xx`);
      this.codeCounters.set(cls, x);
    }
    x.inc();
  }

  pool(host: Host): ConnPool {
    host.pool ??= new ConnPool(this, host);
    return host.pool;
  }

  /** A connection slot was freed: pools waiting on max_connections may open one now. */
  onConnectionClosed(): void {
    if (this.resources.canConnect()) for (const h of this.hosts) h.pool?.retryPending();
    this.updateCircuitBreakerGauges();
  }

  updateCircuitBreakerGauges(): void {
    const r = this.resources;
    const t = r.t;
    this.cbGauges.cx_open!.set(r.connections >= t.maxConnections ? 1 : 0);
    this.cbGauges.rq_open!.set(r.requests >= t.maxRequests ? 1 : 0);
    this.cbGauges.rq_pending_open!.set(r.pendingRequests >= t.maxPendingRequests ? 1 : 0);
    this.cbGauges.rq_retry_open!.set(r.retries >= t.maxRetries ? 1 : 0);
    if (t.trackRemaining) {
      this.cbGauges.remaining_cx!.set(Math.max(0, t.maxConnections - r.connections));
      this.cbGauges.remaining_pending!.set(Math.max(0, t.maxPendingRequests - r.pendingRequests));
      this.cbGauges.remaining_rq!.set(Math.max(0, t.maxRequests - r.requests));
      this.cbGauges.remaining_retries!.set(Math.max(0, t.maxRetries - r.retries));
    }
  }

  destroy(): void {
    this.destroyed = true;
    if (this.dnsTimer) clearTimeout(this.dnsTimer);
    for (const h of this.hosts) h.pool?.close();
    this.upstreamLog.debug(`removing cluster ${this.name}`);
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
