// Active HTTP health checking of a cluster's hosts, as Envoy's HealthCheckerImplBase and HttpHealthCheckerImpl do
// (source/extensions/health_checkers/http/health_checker_impl.cc, docs arch_overview/upstream/health_checking and
// api config/core/v3/health_check.proto): one session per host sends `GET <path>` (Host: the `host` field or the
// cluster's name, user-agent `Envoy/HC`) every interval; a response outside `expected_statuses` (default 200) marks
// the host unhealthy at once (the unhealthy_threshold is ignored for HTTP answers), a timeout or connection failure
// after unhealthy_threshold in a row; healthy_threshold successes bring it back, a single one for a host not yet
// checked. New hosts start `/failed_active_hc/pending_active_hc`; the cluster warms until each was checked once.
// Intervals: no_traffic_interval (60 s) until the cluster's first upstream connection, then interval, or
// unhealthy_interval / the edge intervals as Envoy picks them. Stats `cluster.<name>.health_check.{attempts,
// success,failure,network_failure,passive_failure,verify_cluster,healthy,degraded}`.
// Only http_health_check is implemented (tcp/grpc/custom are refused), and one health check per cluster, as Envoy.
import http from 'node:http';
import type { Logger } from '../log.ts';
import type { StatsStore } from '../stats.ts';
import type { HealthCheckSpec } from './cluster-health-config.ts';
import type { Host } from './host.ts';

const COUNTERS = ['attempts', 'success', 'failure', 'network_failure', 'passive_failure', 'verify_cluster'] as const;
const GAUGES = ['healthy', 'degraded'] as const;
export type HealthCheckStats = ReturnType<typeof makeStats>;

function makeStats(store: StatsStore, cluster: string) {
  return store.group(`cluster.${cluster}.health_check.`, COUNTERS, GAUGES);
}

/** What the checker needs of its cluster. */
export interface CheckedCluster {
  readonly name: string;
  /** The cluster has had upstream traffic (Envoy: upstream_cx_total used): the normal intervals apply. */
  hadTraffic(): boolean;
  /** A host's health flags changed: gauges and load balancing see it. */
  onHealthChanged(): void;
}

type Outcome = 'success' | 'http_failure' | 'network_failure' | 'timeout';

/** One host's session: its timer, its connection, its consecutive counts. */
class Session {
  private timer: NodeJS.Timeout | undefined;
  private request: http.ClientRequest | undefined;
  private readonly agent: http.Agent;
  private successes = 0;
  private failures = 0;
  private stopped = false;
  /** Resolves after the host's first check, whatever its outcome. */
  readonly firstDone: Promise<void>;
  private markFirst!: () => void;

  private readonly checker: HealthChecker;
  readonly host: Host;

  constructor(checker: HealthChecker, host: Host) {
    this.checker = checker;
    this.host = host;
    this.agent = new http.Agent({ keepAlive: checker.spec.reuseConnection, maxSockets: 1 });
    this.firstDone = new Promise((r) => {
      this.markFirst = r;
    });
    this.timer = setTimeout(() => this.check(), 0);
    this.timer.unref();
  }

  private check(): void {
    if (this.stopped) return;
    const spec = this.checker.spec;
    this.checker.stats.attempts.inc();
    let settled = false;
    const done = (o: Outcome) => {
      if (settled || this.stopped) return;
      settled = true;
      clearTimeout(timeout);
      this.request = undefined;
      this.onOutcome(o);
    };
    const timeout = setTimeout(() => {
      req.destroy();
      done('timeout');
    }, spec.timeoutMs);
    const req = http.request({
      host: this.host.address,
      port: this.host.port,
      method: spec.method,
      path: spec.path,
      agent: this.agent,
      headers: { host: spec.host || this.checker.cluster.name, 'user-agent': 'Envoy/HC' },
    });
    this.request = req;
    req.on('response', (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      res.on('end', () => done(spec.expected.some(([s, e]) => status >= s && status < e) ? 'success' : 'http_failure'));
      res.on('error', () => done('network_failure'));
    });
    req.on('error', () => done('network_failure'));
    req.end();
  }

  private onOutcome(o: Outcome): void {
    const c = this.checker;
    const f = this.host.flags;
    const wasPending = f.pendingActiveHc;
    const wasFailed = f.failedActiveHc;
    f.pendingActiveHc = false;
    if (o === 'success') {
      c.stats.success.inc();
      this.failures = 0;
      this.successes++;
      f.activeHcTimeout = false;
      // A host not yet checked needs one success; else healthy_threshold in a row.
      if (wasFailed && (wasPending || this.successes >= c.spec.healthyThreshold)) {
        f.failedActiveHc = false;
        c.log.debug(`health check succeeded for ${this.host.key}: now healthy`);
      }
    } else {
      c.stats.failure.inc();
      if (o !== 'http_failure') c.stats.network_failure.inc();
      this.successes = 0;
      this.failures++;
      if (o === 'timeout') f.activeHcTimeout = true;
      // An HTTP answer outside expected_statuses is an immediate failure; network errors count to the threshold.
      if (!wasFailed && (o === 'http_failure' || this.failures >= c.spec.unhealthyThreshold)) {
        f.failedActiveHc = true;
        c.log.debug(`health check failed for ${this.host.key} (${o}): now unhealthy`);
      }
    }
    const changed = wasFailed !== f.failedActiveHc;
    c.onSessionResult(changed);
    this.markFirst();
    this.schedule(changed);
  }

  private schedule(changed: boolean): void {
    if (this.stopped) return;
    const s = this.checker.spec;
    const healthy = !this.host.flags.failedActiveHc;
    let ms: number;
    if (!this.checker.cluster.hadTraffic()) ms = s.noTrafficIntervalMs;
    else if (changed) ms = healthy ? s.healthyEdgeIntervalMs : s.unhealthyEdgeIntervalMs;
    else ms = healthy ? s.intervalMs : s.unhealthyIntervalMs;
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.request?.destroy();
    this.agent.destroy();
    this.markFirst();
  }
}

/** A cluster's active health checker: a session per host, the health_check.* stats. */
export class HealthChecker {
  readonly stats: HealthCheckStats;
  private readonly sessions = new Map<Host, Session>();
  readonly spec: HealthCheckSpec;
  readonly cluster: CheckedCluster;
  readonly log: Logger;

  constructor(spec: HealthCheckSpec, cluster: CheckedCluster, store: StatsStore, log: Logger) {
    this.spec = spec;
    this.cluster = cluster;
    this.log = log;
    this.stats = makeStats(store, cluster.name);
  }

  /** The cluster's host set changed: sessions for new hosts (which start failed and pending), none for gone ones. */
  setHosts(hosts: Host[]): Promise<void> {
    const keep = new Set(hosts);
    for (const [h, s] of this.sessions) {
      if (!keep.has(h)) {
        s.stop();
        this.sessions.delete(h);
      }
    }
    for (const h of hosts) {
      if (this.sessions.has(h)) continue;
      h.flags.failedActiveHc = true;
      h.flags.pendingActiveHc = true;
      this.sessions.set(h, new Session(this, h));
    }
    this.updateGauges();
    return Promise.all([...this.sessions.values()].map((s) => s.firstDone)).then(() => {});
  }

  onSessionResult(changed: boolean): void {
    this.updateGauges();
    if (changed) this.cluster.onHealthChanged();
  }

  private updateGauges(): void {
    let healthy = 0;
    for (const h of this.sessions.keys()) if (!h.flags.failedActiveHc) healthy++;
    this.stats.healthy.set(healthy);
  }

  stop(): void {
    for (const s of this.sessions.values()) s.stop();
    this.sessions.clear();
  }
}
