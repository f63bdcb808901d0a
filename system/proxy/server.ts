// The proxy server: bootstrap → admin, static clusters and listeners, the ADS client and its four subscriptions,
// Envoy's initialization order (static clusters, CDS and warming, then LDS and warming, then LIVE: listeners take
// traffic), the stats flush timer and shutdown.
import { readFileSync } from 'node:fs';
import { timestampString, toGrpcObject } from '../shared/envoy/protojson.ts';
import { TYPE_URL } from '../shared/envoy/protos.ts';
import { AdminServer } from './admin/admin.ts';
import { durationMs } from './config/errors.ts';
import { RouteManager } from './config/route-manager.ts';
import { FACTORIES } from './filters/registry.ts';
import { type AccessLogSinks, PROCESS_SINKS } from './http/access-log.ts';
import { ListenerManager } from './listener/listener-manager.ts';
import { type Logger, LogRegistry } from './log.ts';
import type { CommandLineOptions, ServerInstance, ServerState } from './server-instance.ts';
import { StatsStore } from './stats.ts';
import { ClusterManager } from './upstream/cluster-manager.ts';
import { AdsClient } from './xds/ads-client.ts';

type J = Record<string, any>;

const STATE_NUMBER: Record<ServerState, number> = { LIVE: 0, DRAINING: 1, PRE_INITIALIZING: 2, INITIALIZING: 3 };

const PACKAGE_VERSION: string = (() => {
  try {
    return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** Envoy prints `<sha>/<version>/<status>/<build type>/<ssl>`; this proxy names itself in the same shape. */
export const PROXY_VERSION = `gwlab/${PACKAGE_VERSION}/Clean/RELEASE/Node-${process.versions.node}`;

export interface ProxyOptions {
  /** The bootstrap as canonical JSON (see bootstrap.ts). */
  bootstrap: J;
  cli?: Partial<CommandLineOptions>;
  logs?: LogRegistry;
  accessLogSinks?: AccessLogSinks;
  /** Called after /quitquitquit stopped the server (the command line exits the process). */
  onQuit?: () => void;
  /** ADS reconnect back-off (Envoy: 500 ms base, 30 s max). */
  adsBackoff?: { baseMs: number; maxMs: number };
}

function socketAddr(a: J | undefined): { host: string; port: number } | undefined {
  const sa = a?.socket_address;
  if (!sa) return undefined;
  return { host: String(sa.address ?? '127.0.0.1'), port: Number(sa.port_value ?? 0) };
}

export class ProxyServer implements ServerInstance {
  readonly bootstrap: J;
  readonly cli: Partial<CommandLineOptions>;
  readonly logs: LogRegistry;
  readonly stats = new StatsStore();
  readonly clusters: ClusterManager;
  readonly routes: RouteManager;
  readonly listeners: ListenerManager;
  readonly startedAt = timestampString(Date.now());
  readonly startMono = performance.now();
  readonly version = PROXY_VERSION;
  ads: AdsClient | undefined;
  admin: AdminServer | undefined;
  state: ServerState = 'PRE_INITIALIZING';
  private healthFailed = false;
  private readonly mainLog: Logger;
  private readonly opts: ProxyOptions;
  private flushTimer: NodeJS.Timeout | undefined;
  private initTimers: NodeJS.Timeout[] = [];
  private connectionCounter = 0;
  private liveResolve!: () => void;
  /** Resolves when the server reaches LIVE. */
  readonly live: Promise<void>;
  private stopping: Promise<void> | undefined;

  constructor(opts: ProxyOptions) {
    this.opts = opts;
    this.bootstrap = opts.bootstrap;
    this.cli = opts.cli ?? {};
    this.logs = opts.logs ?? new LogRegistry();
    this.mainLog = this.logs.logger('main');
    this.live = new Promise((r) => {
      this.liveResolve = r;
    });
    const connectionIds = () => this.connectionCounter++;
    this.clusters = new ClusterManager({
      stats: this.stats,
      logs: this.logs,
      connectionIds,
      setEdsNames: (names) => this.ads?.setNames(TYPE_URL.clusterLoadAssignment, names),
    });
    this.routes = new RouteManager({
      stats: this.stats,
      logs: this.logs,
      setRdsNames: (names) => this.ads?.setNames(TYPE_URL.routeConfiguration, names),
    });
    this.listeners = new ListenerManager({
      stats: this.stats,
      logs: this.logs,
      clusters: this.clusters,
      routes: this.routes,
      server: { healthCheckFailed: () => this.healthFailed, isLive: () => this.state === 'LIVE' },
      accessLogSinks: opts.accessLogSinks ?? PROCESS_SINKS,
      connectionIds,
    });
    const s = this.stats;
    s.gauge('server.live').set(0);
    s.gauge('server.state').set(STATE_NUMBER.PRE_INITIALIZING);
    s.gauge('server.concurrency').set(1);
    s.gauge('server.hot_restart_epoch').set(0);
    s.gauge('server.version').set(0);
    s.gauge('server.uptime');
    s.gauge('server.memory_allocated');
    s.gauge('server.memory_heap_size');
    s.gauge('server.memory_physical_size');
    s.gauge('server.total_connections');
    s.gauge('server.parent_connections');
    s.gauge('server.days_until_first_cert_expiring').set(2147483647);
    s.counter('server.debug_assertion_failures');
    s.counter('server.envoy_bug_failures');
    s.counter('server.dynamic_unknown_fields');
    s.counter('server.static_unknown_fields');
    s.counter('server.worker_0.watchdog_miss');
    s.histogram('server.initialization_time_ms');
  }

  healthCheckFailed(): boolean {
    return this.healthFailed;
  }

  setHealthCheckFailed(failed: boolean): void {
    this.healthFailed = failed;
    this.stats.gauge('server.state').set(STATE_NUMBER[this.reportedState()]);
  }

  /** What /ready and server.state report: DRAINING once health checks fail (Envoy's serverState). */
  reportedState(): ServerState {
    if (this.state === 'LIVE' && this.healthFailed) return 'DRAINING';
    return this.state;
  }

  nextConnectionId(): number {
    return this.connectionCounter++;
  }

  /** Binds the admin and static listeners, creates static clusters and starts xDS. Resolves before LIVE. */
  async start(): Promise<void> {
    const b = this.bootstrap;
    const log = this.mainLog;
    log.info(`initializing epoch 0 (base id=0, hot restart version=disabled)`);
    const httpFilters = FACTORIES.map((f) => f.canonicalName).sort();
    log.info(`statically linked extensions: envoy.filters.http: ${httpFilters.join(', ')}`);
    const adminAddr = socketAddr(b.admin?.address);
    if (adminAddr) {
      this.admin = new AdminServer(this);
      await this.admin.listen(adminAddr.host, adminAddr.port);
      this.logs.logger('admin').info(`admin address: ${this.admin.address()}`);
    }
    const flushMs = durationMs(b.stats_flush_interval) ?? 5000;
    this.flushTimer = setInterval(() => this.flushStats(), flushMs);
    this.flushTimer.unref();
    for (const c of (b.static_resources?.clusters ?? []) as J[]) this.clusters.addStatic(c);
    this.state = 'INITIALIZING';
    this.stats.gauge('server.state').set(STATE_NUMBER.INITIALIZING);
    for (const l of (b.static_resources?.listeners ?? []) as J[]) await this.listeners.addStatic(l);
    this.startXds();
    void this.initialize();
  }

  private startXds(): void {
    const dyn = this.bootstrap.dynamic_resources as J | undefined;
    const ads = dyn?.ads_config as J | undefined;
    if (!ads) return;
    const grpcService = (ads.grpc_services ?? [])[0] as J | undefined;
    let target: string;
    let clusterName: string;
    if (grpcService?.envoy_grpc) {
      clusterName = String(grpcService.envoy_grpc.cluster_name);
      const c = this.clusters.get(clusterName);
      if (!c) throw new Error(`ads_config: unknown gRPC cluster '${clusterName}' (it must be a static cluster)`);
      const e = c.spec.endpoints[0];
      if (!e) throw new Error(`ads_config: cluster '${clusterName}' has no endpoints`);
      target = `${e.address.includes(':') ? `[${e.address}]` : e.address}:${e.port}`;
    } else if (grpcService?.google_grpc) {
      clusterName = String(grpcService.google_grpc.stat_prefix || grpcService.google_grpc.target_uri);
      target = String(grpcService.google_grpc.target_uri);
    } else {
      throw new Error('dynamic_resources.ads_config: grpc_services[0] (envoy_grpc or google_grpc) is required');
    }
    const retry = grpcService?.envoy_grpc?.retry_policy?.retry_back_off;
    const node = toGrpcObject('envoy.config.core.v3.Node', {
      ...(this.bootstrap.node ?? {}),
      user_agent_name: 'envoy',
      user_agent_version: PROXY_VERSION,
    });
    const client = new AdsClient({
      target,
      clusterName,
      node: node as unknown as J,
      setNodeOnFirstMessageOnly: ads.set_node_on_first_message_only === true,
      logs: this.logs,
      stats: this.stats,
      backoffBaseMs: this.opts.adsBackoff?.baseMs ?? durationMs(retry?.base_interval) ?? 500,
      backoffMaxMs: this.opts.adsBackoff?.maxMs ?? durationMs(retry?.max_interval) ?? 30_000,
      delta: ads.api_type === 'DELTA_GRPC',
    });
    this.ads = client;
    const usesAds = (src: J | undefined) => !!src && (!!src.ads || !!src.api_config_source);
    // update_duration: Envoy's histogram of the time from a response's arrival to its ACK or NACK.
    const s = this.stats;
    if (usesAds(dyn?.cds_config)) {
      const h = s.histogram('cluster_manager.cds.update_duration');
      client.watch(TYPE_URL.cluster, {
        wildcard: true,
        onResponse: (r, v) => this.clusters.onCds(r, v),
        onHandled: (ms) => h.record(ms),
      });
    }
    client.watch(TYPE_URL.clusterLoadAssignment, {
      wildcard: false,
      onResponse: (r, v) => this.clusters.onEds(r, v),
      onHandled: (ms, rs) => {
        for (const r of rs)
          for (const c of this.clusters.all())
            if (c.spec.edsServiceName === r.name) s.histogram(`cluster.${c.name}.update_duration`).record(ms);
      },
    });
    if (usesAds(dyn?.lds_config)) {
      const h = s.histogram('listener_manager.lds.update_duration');
      client.watch(TYPE_URL.listener, {
        wildcard: true,
        onResponse: (r, v) => this.listeners.onLds(r, v),
        onHandled: (ms) => h.record(ms),
      });
    }
    client.watch(TYPE_URL.routeConfiguration, {
      wildcard: false,
      onResponse: (r, v) => this.routes.onRds(r, v),
      onHandled: (ms, rs) => {
        for (const r of rs) {
          const p = this.routes.providers.get(r.name);
          if (p) s.histogram(`${p.statPrefix}update_duration`).record(ms);
        }
      },
    });
    // Names static clusters and listeners already need.
    client.setNames(TYPE_URL.routeConfiguration, [...this.routes.providers.keys()]);
    client.start();
  }

  /** Envoy's init sequence; ends LIVE. */
  private async initialize(): Promise<void> {
    const dyn = this.bootstrap.dynamic_resources as J | undefined;
    const timeoutOf = (src: J | undefined) => durationMs(src?.initial_fetch_timeout) ?? 15_000;
    const upstream = this.logs.logger('upstream');
    await this.clusters.staticReady();
    if (this.ads && dyn?.cds_config) {
      upstream.info('cm init: initializing cds');
      const t = timeoutOf(dyn.cds_config);
      if (t > 0) {
        this.initTimers.push(
          setTimeout(() => {
            upstream.warn(`initial fetch timeout for ${TYPE_URL.cluster} after ${t}ms`);
            this.clusters.initFetchTimeout();
            this.clusters.stopWaitingForWarming();
          }, t),
        );
      }
      await this.clusters.initialized();
    }
    if (this.stopping) return;
    upstream.info('cm init: all clusters initialized');
    this.mainLog.info('all clusters initialized. initializing init manager');
    if (this.ads && dyn?.lds_config) {
      const t = timeoutOf(dyn.lds_config);
      if (t > 0) {
        this.initTimers.push(
          setTimeout(() => {
            this.logs.logger('config').warn(`initial fetch timeout for ${TYPE_URL.listener} after ${t}ms`);
            this.listeners.initFetchTimeout();
            this.routes.giveUpWaiting();
          }, t),
        );
      }
      await this.listeners.initialized();
    }
    await Promise.all([...this.listeners.static_.values()].map((l) => l.network.ready()));
    if (this.stopping) return;
    for (const t of this.initTimers) clearTimeout(t);
    this.state = 'LIVE';
    this.stats.gauge('server.live').set(1);
    this.stats.gauge('server.state').set(STATE_NUMBER[this.reportedState()]);
    this.stats.histogram('server.initialization_time_ms').record(performance.now() - this.startMono);
    this.mainLog.info('all dependencies initialized. starting workers');
    this.listeners.startWorkers();
    this.mainLog.info('starting main dispatch loop');
    this.liveResolve();
  }

  /** Every stats_flush_interval: server gauges, counter latching, and the `flushing stats` debug line. */
  flushStats(): void {
    this.mainLog.debug('flushing stats');
    const s = this.stats;
    const mem = process.memoryUsage();
    s.gauge('server.uptime').set(Math.floor((performance.now() - this.startMono) / 1000));
    s.gauge('server.memory_allocated').set(mem.heapUsed);
    s.gauge('server.memory_heap_size').set(mem.heapTotal);
    s.gauge('server.memory_physical_size').set(mem.rss);
    let conns = 0;
    for (const l of this.listeners.listening()) conns += l.stats.downstream_cx_active.value;
    s.gauge('server.total_connections').set(conns);
    s.latch();
  }

  /** Stops everything this server started. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.state = 'DRAINING';
      for (const t of this.initTimers) clearTimeout(t);
      if (this.flushTimer) clearInterval(this.flushTimer);
      this.ads?.stop();
      await this.listeners.close();
      this.clusters.destroy();
      await this.admin?.close();
      this.mainLog.info('exiting');
    })();
    return this.stopping;
  }

  /** /quitquitquit */
  quit(): void {
    this.mainLog.info('shutting down server instance');
    void this.stop().then(() => this.opts.onQuit?.());
  }
}

/** Creates and starts a proxy (admin and static listeners bound when it resolves). */
export async function startProxy(opts: ProxyOptions): Promise<ProxyServer> {
  const srv = new ProxyServer(opts);
  try {
    await srv.start();
  } catch (err) {
    await srv.stop();
    throw err;
  }
  return srv;
}
