// An upstream cluster at run time (Envoy's ClusterImplBase): its hosts from load_assignment (STATIC), DNS
// (STRICT_DNS, LOGICAL_DNS: resolved again every dns_refresh_rate) or EDS, initialization (first host set), its
// load balancer, circuit breakers, one connection pool per host, active health checking (health-checker.ts: the
// cluster warms until each host was checked once, as Envoy's), outlier detection (outlier-detector.ts), and response
// code stats. The config it runs is compiled by cluster-config.ts.
import dns from 'node:dns';
import net from 'node:net';
import type { Logger, LogRegistry } from '../log.ts';
import type { Counter, StatsStore } from '../stats.ts';
import { Resources } from './circuit-breakers.ts';
import { type ClusterSpec, type EndpointSpec, parseLoadAssignment } from './cluster-config.ts';
import { type ClusterStats, makeClusterStats } from './cluster-stats.ts';
import { HealthChecker } from './health-checker.ts';
import { Host } from './host.ts';
import { Http2Pool } from './http2-client.ts';
import { LoadBalancer } from './load-balancer.ts';
import { OutlierDetector } from './outlier-detector.ts';
import { ConnPool, type UpstreamPool } from './pool.ts';
import { UpstreamSslStats, type UpstreamTls } from './tls-transport.ts';

type J = Record<string, any>;

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
  readonly tls?: { config: UpstreamTls; stats: UpstreamSslStats };
  private readonly upstreamLog: Logger;
  hosts: Host[] = [];
  private readonly lb: LoadBalancer;
  /** One connection pool per host, created on first use and closed when the host goes. */
  private readonly pools = new Map<Host, UpstreamPool>();
  /** Resolves when the cluster has its first host set (EDS: first assignment; DNS: first resolution). */
  readonly initialized: Promise<void>;
  private markInitialized!: () => void;
  isInitialized = false;
  /** The ClusterLoadAssignment in effect (EDS), for config_dump?include_eds. */
  loadAssignment: J | undefined;
  private dnsTimer: NodeJS.Timeout | undefined;
  private destroyed = false;
  readonly healthChecker: HealthChecker | undefined;
  readonly outlier: OutlierDetector | undefined;
  /** The first health check round of the current host set (or nothing to wait for). */
  private checked: Promise<void> = Promise.resolve();

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
    this.resources = new Resources(spec.thresholds, deps.stats, spec.name);
    this.statsStore = deps.stats;
    this.stats = makeClusterStats(deps.stats, spec.name);
    if (spec.tls) this.tls = { config: spec.tls, stats: new UpstreamSslStats(spec.name, deps.stats) };
    this.lb = new LoadBalancer(
      spec.lbPolicy,
      spec.panicThreshold,
      spec.choiceCount,
      this.stats.lb_healthy_panic,
      spec.ring,
    );
    const health = {
      name: spec.name,
      hadTraffic: () => this.stats.upstream_cx_total.used,
      onHealthChanged: () => this.onHealthChanged(),
    };
    if (spec.healthCheck) {
      this.healthChecker = new HealthChecker(spec.healthCheck, health, deps.stats, deps.logs.logger('hc'));
    }
    if (spec.outlier) {
      const view = { ...health, hosts: () => this.hosts };
      this.outlier = new OutlierDetector(spec.outlier, view, deps.stats, deps.logs.logger('upstream'));
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

  /** Initialized once the first host set is in and, with active health checking, each host was checked once. */
  private initDone(): void {
    if (this.isInitialized) return;
    this.isInitialized = true;
    this.checked.then(() => this.markInitialized());
  }

  /** A host's active health check or outlier status changed: the membership gauges follow. */
  private onHealthChanged(): void {
    this.stats.membership_healthy.set(this.hosts.filter((h) => h.healthy).length);
  }

  /** The router's report of a host's answer (a local-origin failure as 503, a timeout as 504) for outlier detection. */
  reportResult(host: Host, status: number): void {
    this.outlier?.putHttpResponseCode(host, status);
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
        kept.update(e);
        old.delete(probe.key);
        next.push(kept);
      } else {
        next.push(probe);
      }
    }
    for (const gone of old.values()) {
      this.pools.get(gone)?.close();
      this.pools.delete(gone);
    }
    const changed = old.size > 0 || next.length !== this.hosts.length || next.some((h, i) => h !== this.hosts[i]);
    this.hosts = next;
    this.lb.update(next);
    if (this.healthChecker) this.checked = this.healthChecker.setHosts(next);
    this.outlier?.setHosts(next);
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
  chooseHost(hash?: bigint): Host | undefined {
    return this.lb.choose(hash);
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

  /** A counter of this cluster made on first use (`cluster.<name>.<stat>`), e.g. tcp_proxy's upstream byte counts. */
  counter(stat: string): Counter {
    return this.statsStore.counter(`cluster.${this.name}.${stat}`);
  }

  /** The connection pool of one of this cluster's hosts. */
  pool(host: Host): UpstreamPool {
    let p = this.pools.get(host);
    if (!p) {
      // HTTP/2 clusters: one multiplexed session per host (http2-client.ts); else HTTP/1.1 keep-alive connections.
      p = this.spec.http2 ? new Http2Pool(this, host, this.spec.http2Options) : new ConnPool(this, host);
      this.pools.set(host, p);
    }
    return p;
  }

  /** A connection slot was freed: pools waiting on max_connections may open one now. */
  onConnectionClosed(): void {
    if (this.resources.canConnect()) for (const p of this.pools.values()) p.retryPending();
    this.resources.updateGauges();
  }

  destroy(): void {
    this.destroyed = true;
    if (this.dnsTimer) clearTimeout(this.dnsTimer);
    this.healthChecker?.stop();
    this.outlier?.stop();
    for (const p of this.pools.values()) p.close();
    this.upstreamLog.debug(`removing cluster ${this.name}`);
  }
}
