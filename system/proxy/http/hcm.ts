// The HTTP connection manager (envoy.filters.network.http_connection_manager) at run time: built once per listener
// version from its config (own fields: hcm-config.ts; routes inline or by RDS; the http_filters chain, the router
// last: filters/filter-chain.ts; access logs), then the per-request flow: the codec's and the connection manager's
// refusals, request id and forwarding headers, host port stripping, route lookup, and the filters in order, the
// router answering at the end of the chain. Stats are Envoy's http.<stat_prefix>.* and
// listener.<address>.http.<stat_prefix>.* (hcm-stats.ts).

import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { isIP } from 'node:net';
import { ConfigError } from '../config/errors.ts';
import { stripPort } from '../config/host-port.ts';
import type { RdsProvider } from '../config/route-manager.ts';
import { compileRouteConfiguration, type RouteTable } from '../config/route-table.ts';
import { upgradeAllowed } from '../config/upgrade-config.ts';
import type { DownstreamUpgrade, FilterContext, HttpFilter } from '../filters/filter-api.ts';
import { buildFilterChain } from '../filters/filter-chain.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { StatsStore } from '../stats.ts';
import type { ClusterManagerView } from '../upstream/cluster-manager-view.ts';
import { type AccessLogger, type AccessLogSinks, compileAccessLog } from './access-log.ts';
import { ActiveStream, type StreamOwner } from './active-stream.ts';
import { compileHcmConfig, type HcmConfig } from './hcm-config.ts';
import { type HcmStats, makeHcmStats } from './hcm-stats.ts';
import type { TargetOptions } from './request-target.ts';

type J = Record<string, any>;

export interface HcmDeps {
  stats: StatsStore;
  logs: LogRegistry;
  clusters: ClusterManagerView & { has(name: string): boolean };
  server: FilterContext['server'];
  accessLogSinks: AccessLogSinks;
  /** Returns (creating on first use) the RDS subscription for a route config name. */
  rds(name: string): RdsProvider;
  /**
   * HTTPS listeners whose TLS filter chains name their own route configuration (same connection manager otherwise):
   * those names; a request uses the one of the chain its connection took (`handle`'s routeConfig).
   */
  chainRds?: string[];
  /** `listener.<address>.` for the per-listener HCM stats. */
  listenerStatPrefix: string;
  /** The listener's port, for strip_matching_host_port. */
  listenerPort: number;
  /** Static listeners validate inline route clusters (validate_clusters default). */
  staticListener: boolean;
}

type RouteSource = { kind: 'inline'; table: RouteTable } | { kind: 'rds'; provider: RdsProvider };

export class HcmRuntime implements StreamOwner {
  readonly config: HcmConfig;
  /** How the HTTP/1 codec reads request-targets (http_protocol_options.allow_absolute_url, scheme validation). */
  readonly targetOptions: TargetOptions;
  /** The filter chain in order, the router last. */
  readonly filters: HttpFilter[];
  /** Per filter: `disabled: true` in the chain (runs only where a route's typed_per_filter_config enables it). */
  readonly filtersDisabled: boolean[];
  readonly anyFilterDisabled: boolean;
  readonly routes: RouteSource;
  /** Route configurations of TLS chains other than the HCM's own (HcmDeps.chainRds), by name. */
  readonly chainRoutes = new Map<string, RdsProvider>();
  readonly stats: HcmStats;
  readonly accessLogs: AccessLogger[];
  readonly deps: HcmDeps;
  readonly httpLog: Logger;
  readonly statPrefix: string;

  constructor(cfg: J, deps: HcmDeps) {
    this.deps = deps;
    this.httpLog = deps.logs.logger('http');
    const { config, targetOptions } = compileHcmConfig(cfg);
    this.config = config;
    this.targetOptions = targetOptions;
    this.statPrefix = config.statPrefix;
    this.routes = routeSource(cfg, deps);
    for (const n of deps.chainRds ?? []) {
      if (this.routes.kind !== 'rds' || n !== this.routes.provider.name) this.chainRoutes.set(n, deps.rds(n));
    }
    this.stats = makeHcmStats(deps.stats, config.statPrefix, deps.listenerStatPrefix);
    const ctx: FilterContext = {
      stats: deps.stats,
      logs: deps.logs,
      log: deps.logs.logger('filter'),
      clusters: deps.clusters,
      statPrefix: `http.${config.statPrefix}.`,
      server: deps.server,
    };
    const chain = buildFilterChain((cfg.http_filters ?? []) as J[], ctx);
    this.filters = chain.filters;
    this.filtersDisabled = chain.disabled;
    this.anyFilterDisabled = chain.disabled.includes(true);
    this.accessLogs = ((cfg.access_log ?? []) as J[]).map((e, i) =>
      compileAccessLog(e, `access_log[${i}]`, deps.accessLogSinks),
    );
  }

  /** The route table: the HCM's own, or that of the TLS chain's route configuration `name`. */
  routeTable(name?: string): RouteTable | undefined {
    const chain = name === undefined ? undefined : this.chainRoutes.get(name);
    if (chain) return chain.table;
    return this.routes.kind === 'inline' ? this.routes.table : this.routes.provider.table;
  }

  /** Ready to serve: RDS listeners wait for their RouteConfigurations (listener warming). */
  ready(): Promise<void> {
    const own = this.routes.kind === 'rds' ? this.routes.provider.ready : Promise.resolve();
    if (!this.chainRoutes.size) return own;
    return Promise.all([own, ...[...this.chainRoutes.values()].map((p) => p.ready)]).then(() => {});
  }

  close(): void {
    for (const a of this.accessLogs) a.close();
  }

  /**
   * A connection of this HCM's listener, counted when its codec is known (Envoy creates the codec on the first bytes
   * with codec_type AUTO: ALPN, else the HTTP/2 preface): downstream_cx_http1_* or downstream_cx_http2_*.
   */
  onNewConnection(protocol: 'http1' | 'http2' = 'http1'): void {
    const st = this.stats;
    st.downstream_cx_total.inc();
    st.downstream_cx_active.add(1);
    (protocol === 'http2' ? st.downstream_cx_http2_total : st.downstream_cx_http1_total).inc();
    (protocol === 'http2' ? st.downstream_cx_http2_active : st.downstream_cx_http1_active).add(1);
  }

  onConnectionClosed(lengthMs: number, remote: boolean, protocol: 'http1' | 'http2' = 'http1'): void {
    this.stats.downstream_cx_active.sub(1);
    (protocol === 'http2' ? this.stats.downstream_cx_http2_active : this.stats.downstream_cx_http1_active).sub(1);
    this.stats.downstream_cx_destroy.inc();
    (remote ? this.stats.downstream_cx_destroy_remote : this.stats.downstream_cx_destroy_local).inc();
    this.stats.downstream_cx_length_ms.record(lengthMs);
  }

  /**
   * A request; `upgrade` when it came as an upgrade (Node's 'upgrade' event: the raw connection is the stream's);
   * `routeConfig`: the route configuration of the TLS chain its connection took, when the chain names its own.
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    connectionId: number,
    upgrade?: DownstreamUpgrade,
    routeConfig?: string,
  ): void {
    if (upgrade) upgrade.streamIdleTimeoutMs = this.config.streamIdleTimeoutMs;
    const s = new ActiveStream(this, req, res, connectionId, upgrade);
    this.stats.downstream_rq_total.inc();
    (s.http2 ? this.stats.downstream_rq_http2_total : this.stats.downstream_rq_http1_total).inc();
    this.stats.downstream_rq_active.add(1);
    const log = this.httpLog;
    if (log.on('debug')) {
      log.debug('new stream', { ConnectionId: connectionId });
      const end = !s.hasBody();
      const lines = [`':authority', '${s.host}'`, `':path', '${s.path}'`, `':method', '${s.method}'`];
      if (s.scheme !== 'http') lines.push(`':scheme', '${s.scheme}'`);
      const raw = req.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) {
        const k = raw[i]!.toLowerCase();
        if (k !== 'host' && k.charCodeAt(0) !== 58 /* ':' */) lines.push(`'${k}', '${raw[i + 1]}'`);
      }
      log.debug(`request headers complete (end_stream=${end}):\n${lines.join('\n')}`, s.tags);
      if (end) log.debug('request end stream', s.tags);
    }
    if (!this.checkRequest(s)) return;
    this.prepareHeaders(s);
    const table = this.routeTable(routeConfig);
    if (table) {
      const q = s.path.indexOf('?');
      let path = q < 0 ? s.path : s.path.slice(0, q);
      const hash = path.indexOf('#');
      if (hash >= 0) path = path.slice(0, hash);
      if (this.config.mergeSlashes) path = path.replace(/\/{2,}/g, '/');
      s.route = table.route(s.host, { path, query: q < 0 ? '' : s.path.slice(q + 1), header: s.header });
      if (s.route) {
        s.info.routeName = s.route.name;
        s.info.virtualHostName = s.route.vhost.name;
      }
    }
    if (s.upgradeType !== undefined) {
      // Envoy's createUpgradeFilterChain: an upgrade (CONNECT included) neither the route nor the HCM allows is
      // refused before the filters run (http/upgrade.ts).
      const route = s.route?.action.kind === 'route' ? s.route.action.upgrades : undefined;
      if (s.method === 'CONNECT' || !upgradeAllowed(this.config.upgrades, route, s.upgradeType)) {
        this.stats.downstream_rq_ws_on_non_ws_route.inc();
        s.sendLocalReply(403, '', { details: 'upgrade_failed' });
        return;
      }
    }
    this.runFilters(s, 0);
  }

  /**
   * What Envoy answers before routing: the codec's refusals of a request-target (400/403, the body the status text,
   * the connection closed; flag DPE), then the connection manager's: an HTTP/1.1 request without Host is 400, a :path
   * that is not relative (asterisk-form, or absolute-form with allow_absolute_url false) 404.
   */
  private checkRequest(s: ActiveStream): boolean {
    const err = s.targetError;
    if (err) {
      this.stats.downstream_cx_protocol_error.inc();
      s.sendLocalReply(err.status, STATUS_CODES[err.status], {
        flag: 'DPE',
        details: err.details,
        headers: { connection: 'close' },
        fromFilter: 0,
      });
      return false;
    }
    if (s.host === '' && s.req.headers.host === undefined && s.req.httpVersion === '1.1') {
      s.sendLocalReply(400, '', { details: 'missing_host_header', headers: { connection: 'close' }, fromFilter: 0 });
      return false;
    }
    if (s.method !== 'CONNECT' && !s.path.startsWith('/')) {
      this.stats.downstream_rq_non_relative_path.inc();
      s.sendLocalReply(404, '', { details: 'absolute_path', fromFilter: 0 });
      return false;
    }
    return true;
  }

  /** x-request-id, x-forwarded-for/-proto, host port stripping, via (Envoy's ConnectionManagerUtility). */
  private prepareHeaders(s: ActiveStream): void {
    const c = this.config;
    const h = s.headers;
    if (c.stripAnyHostPort || c.stripMatchingHostPort) {
      const stripped = stripPort(s.host, c.stripMatchingHostPort ? this.deps.listenerPort : undefined);
      if (stripped !== s.host) {
        s.host = stripped;
        h.host = stripped;
      }
    }
    if (c.stripTrailingHostDot && s.host.endsWith('.')) {
      s.host = s.host.slice(0, -1);
      h.host = s.host;
    }
    // The client address (Envoy's ConnectionManagerUtility::mutateRequestHeaders): with use_remote_address the
    // (xff_num_trusted_hops)th address from the right of x-forwarded-for before our append, without it the
    // (xff_num_trusted_hops + 1)th; none there: the connection's peer. %DOWNSTREAM_REMOTE_ADDRESS% prints it.
    const trusted = lastFromXff(
      h['x-forwarded-for'],
      c.useRemoteAddress ? c.xffNumTrustedHops - 1 : c.xffNumTrustedHops,
    );
    if (trusted) s.info.downstreamRemote = trusted.includes(':') ? `[${trusted}]:0` : `${trusted}:0`;
    if (c.useRemoteAddress) {
      const remote = s.req.socket.remoteAddress ?? '';
      if (!c.skipXffAppend) {
        const xff = h['x-forwarded-for'];
        h['x-forwarded-for'] = xff === undefined ? remote : `${Array.isArray(xff) ? xff.join(',') : xff},${remote}`;
      }
      h['x-forwarded-proto'] = s.tls ? 'https' : 'http';
      h['x-envoy-external-address'] = trusted ?? remote;
    } else if (h['x-forwarded-proto'] === undefined) {
      h['x-forwarded-proto'] = s.tls ? 'https' : 'http';
    }
    if (c.generateRequestId) {
      // An edge proxy (use_remote_address) replaces an external request id unless told to keep it.
      if (h['x-request-id'] === undefined || (c.useRemoteAddress && !c.preserveExternalRequestId)) {
        h['x-request-id'] = randomUUID();
      }
    }
    if (c.via) {
      const v = h.via;
      h.via = v === undefined ? c.via : `${Array.isArray(v) ? v.join(',') : v}, ${c.via}`;
    }
  }

  /**
   * Runs the filters from index `i`, waiting only on filters that return a promise. The chain ends in the router,
   * which answers (or forwards) every request that reaches it.
   */
  private runFilters(s: ActiveStream, i: number): void {
    const filters = this.filters;
    for (; i < filters.length; i++) {
      if (s.done) return;
      const f = filters[i]!;
      if (!f.decodeHeaders || (this.anyFilterDisabled && !s.filterOn(i))) continue;
      s.filterIndex = i;
      let r: boolean | Promise<boolean>;
      try {
        r = f.decodeHeaders(s);
      } catch (err) {
        this.filterError(s, f, err);
        return;
      }
      if (r === false) return;
      if (r !== true) {
        const next = i + 1;
        r.then(
          (go) => {
            if (go && !s.done) this.runFilters(s, next);
          },
          (err) => this.filterError(s, f, err),
        );
        return;
      }
    }
  }

  private filterError(s: ActiveStream, f: HttpFilter, err: unknown): void {
    this.deps.logs.logger('filter').error(`filter ${f.name} failed: ${(err as Error)?.message ?? err}`, s.tags);
    s.sendLocalReply(500, '', { details: 'filter_error' });
  }

  /** After the last byte (or a downstream reset): stats, response flags, access log. */
  streamComplete(s: ActiveStream): void {
    const st = this.stats;
    st.downstream_rq_active.sub(1);
    const code = s.info.responseCode;
    if (s.downstreamGone) {
      st.downstream_rq_rx_reset.inc();
      if (!s.info.flags.size) s.info.setFlag('DC');
      if (!s.responseStarted) {
        s.info.responseCode = 0;
        // Envoy's ResponseCodeDetails::DownstreamRemoteDisconnect, set when the client closed first.
        if (!s.info.responseCodeDetails) s.info.responseCodeDetails = 'downstream_remote_disconnect';
      }
    }
    if (code !== undefined && s.responseStarted) {
      const cls = Math.floor(code / 100);
      if (cls >= 1 && cls <= 5) {
        st.downstream_rq_xx[cls - 1]!.inc();
        st.listener_rq_xx[cls - 1]!.inc();
      }
    }
    st.downstream_rq_completed.inc();
    st.listener_rq_completed.inc();
    const dur = s.info.durationMs();
    if (dur !== undefined) st.downstream_rq_time.record(dur);
    for (const a of this.accessLogs) a.log(s.info);
  }
}

/** Where the HCM's routes come from: an inline route_config, or an RDS subscription over ADS. */
function routeSource(cfg: J, deps: HcmDeps): RouteSource {
  if (cfg.route_config) {
    return {
      kind: 'inline',
      table: compileRouteConfiguration(cfg.route_config, {
        clusterExists: (n) => deps.clusters.has(n),
        validateClustersDefault: deps.staticListener,
      }),
    };
  }
  if (cfg.rds) {
    const name = String(cfg.rds.route_config_name ?? '');
    if (!name) throw new ConfigError('rds.route_config_name: value length must be at least 1 characters');
    const src = cfg.rds.config_source ?? {};
    if (!src.ads && !src.api_config_source) {
      throw new ConfigError(
        `rds.config_source: only ADS config sources are supported (got ${Object.keys(src).join(',') || 'none'})`,
      );
    }
    return { kind: 'rds', provider: deps.rds(name) };
  }
  if (cfg.scoped_routes) throw new ConfigError('scoped_routes: scoped RDS is not supported');
  throw new ConfigError('HttpConnectionManager has no route_specifier (route_config or rds)');
}

/**
 * Envoy's Utility::getLastAddressFromXFF: the address `skip` entries left of the last one in x-forwarded-for, when
 * there are that many and it is an IP address; undefined otherwise (skip < 0: none).
 */
function lastFromXff(xff: string | string[] | undefined, skip: number): string | undefined {
  if (xff === undefined || skip < 0) return undefined;
  const parts = (Array.isArray(xff) ? xff.join(',') : xff).split(',');
  const at = parts.length - 1 - skip;
  if (at < 0) return undefined;
  const ip = parts[at]!.trim();
  return isIP(ip) ? ip : undefined;
}
