// The HTTP connection manager (envoy.filters.network.http_connection_manager): its config compiled once per
// listener version, and the per-request flow: request id and forwarding headers, host port stripping, route
// lookup, the decoder filters in order, then the router. Stats are Envoy's http.<stat_prefix>.* and
// listener.<address>.http.<stat_prefix>.*.
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { ConfigError, durationMs } from '../config/errors.ts';
import { compileRouteConfiguration, type RouteTable } from '../config/route-table.ts';
import { createFilter } from '../filters/registry.ts';
import type { FilterContext, HttpFilter } from '../filters/types.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats.ts';
import type { ClusterManagerView } from '../upstream/cluster-manager-view.ts';
import { type AccessLogger, type AccessLogSinks, compileAccessLog } from './access-log.ts';
import { ActiveStream } from './active-stream.ts';
import type { TargetOptions } from './request-target.ts';
import { routeRequest } from './router.ts';

type J = Record<string, any>;

/** Route configurations delivered by RDS, shared by every HCM that names them. */
export interface RdsProvider {
  readonly name: string;
  table: RouteTable | undefined;
  /** Resolves when the first RouteConfiguration arrived (listener warming waits for it). */
  readonly ready: Promise<void>;
}

export interface HcmDeps {
  stats: StatsStore;
  logs: LogRegistry;
  clusters: ClusterManagerView & { has(name: string): boolean };
  server: FilterContext['server'];
  accessLogSinks: AccessLogSinks;
  /** Returns (creating on first use) the RDS subscription for a route config name. */
  rds(name: string): RdsProvider;
  /** `listener.<address>.` for the per-listener HCM stats. */
  listenerStatPrefix: string;
  /** The listener's port, for strip_matching_host_port. */
  listenerPort: number;
  /** Static listeners validate inline route clusters (validate_clusters default). */
  staticListener: boolean;
}

export interface HcmConfig {
  statPrefix: string;
  serverName: string;
  serverHeaderTransformation: 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';
  useRemoteAddress: boolean;
  skipXffAppend: boolean;
  generateRequestId: boolean;
  preserveExternalRequestId: boolean;
  alwaysSetRequestIdInResponse: boolean;
  stripAnyHostPort: boolean;
  stripMatchingHostPort: boolean;
  stripTrailingHostDot: boolean;
  requestTimeoutMs: number;
  via: string | undefined;
  mergeSlashes: boolean;
}

type RouteSource = { kind: 'inline'; table: RouteTable } | { kind: 'rds'; provider: RdsProvider };

interface HcmStats {
  downstream_cx_total: Counter;
  downstream_cx_active: Gauge;
  downstream_cx_http1_total: Counter;
  downstream_cx_http1_active: Gauge;
  downstream_cx_destroy: Counter;
  downstream_cx_destroy_remote: Counter;
  downstream_cx_destroy_local: Counter;
  downstream_cx_length_ms: Histogram;
  downstream_cx_protocol_error: Counter;
  downstream_rq_total: Counter;
  downstream_rq_http1_total: Counter;
  downstream_rq_active: Gauge;
  downstream_rq_completed: Counter;
  downstream_rq_rx_reset: Counter;
  downstream_rq_tx_reset: Counter;
  downstream_rq_timeout: Counter;
  downstream_rq_non_relative_path: Counter;
  downstream_rq_ws_on_non_ws_route: Counter;
  downstream_rq_time: Histogram;
  downstream_rq_xx: Counter[];
  listener_rq_xx: Counter[];
  listener_rq_completed: Counter;
  no_route: Counter;
  no_cluster: Counter;
  rq_redirect: Counter;
  rq_direct_response: Counter;
  rq_total: Counter;
  rq_reset_after_downstream_response_started: Counter;
}

export class HcmRuntime {
  readonly config: HcmConfig;
  /** How the HTTP/1 codec reads request-targets (http_protocol_options.allow_absolute_url, scheme validation). */
  readonly targetOptions: TargetOptions;
  readonly filters: HttpFilter[];
  /** Per filter: `disabled: true` in the chain (runs only where a route's typed_per_filter_config enables it). */
  readonly filtersDisabled: boolean[];
  readonly anyFilterDisabled: boolean;
  readonly routerFilter: HttpFilter;
  readonly routes: RouteSource;
  readonly stats: HcmStats;
  readonly accessLogs: AccessLogger[];
  readonly deps: HcmDeps;
  readonly httpLog: Logger;
  readonly routerLog: Logger;
  readonly statPrefix: string;
  /** RouterFilter config: suppress_envoy_headers. */
  suppressEnvoyHeaders = false;

  constructor(cfg: J, deps: HcmDeps) {
    this.deps = deps;
    this.httpLog = deps.logs.logger('http');
    this.routerLog = deps.logs.logger('router');
    const statPrefix = String(cfg.stat_prefix ?? '');
    if (!statPrefix) throw new ConfigError('stat_prefix: value length must be at least 1 characters');
    this.statPrefix = statPrefix;
    const codec = cfg.codec_type ?? 'AUTO';
    if (codec === 'HTTP2' || codec === 'HTTP3') {
      throw new ConfigError(`codec_type ${codec} is not supported: this proxy serves HTTP/1.1 listeners`);
    }
    this.config = {
      statPrefix,
      serverName: cfg.server_name || 'envoy',
      serverHeaderTransformation: cfg.server_header_transformation ?? 'OVERWRITE',
      useRemoteAddress: cfg.use_remote_address === true,
      skipXffAppend: cfg.skip_xff_append === true,
      generateRequestId: cfg.generate_request_id !== false,
      preserveExternalRequestId: cfg.preserve_external_request_id === true,
      alwaysSetRequestIdInResponse: cfg.always_set_request_id_in_response === true,
      stripAnyHostPort: cfg.strip_any_host_port === true,
      stripMatchingHostPort: cfg.strip_matching_host_port === true,
      stripTrailingHostDot: cfg.strip_trailing_host_dot === true,
      requestTimeoutMs: durationMs(cfg.request_timeout) ?? 0,
      via: cfg.via || undefined,
      mergeSlashes: cfg.merge_slashes === true,
    };
    // Envoy validates the scheme of absolute URIs on an edge HCM: use_remote_address and no trusted hops.
    this.targetOptions = {
      allowAbsoluteUrl: cfg.http_protocol_options?.allow_absolute_url !== false,
      validateScheme: this.config.useRemoteAddress && Number(cfg.xff_num_trusted_hops ?? 0) === 0,
      tls: false,
    };
    if (this.config.stripAnyHostPort && this.config.stripMatchingHostPort) {
      throw new ConfigError('Error: Only one of `strip_matching_host_port` or `strip_any_host_port` can be set.');
    }
    // Routes: inline, or RDS over ADS.
    if (cfg.route_config) {
      this.routes = {
        kind: 'inline',
        table: compileRouteConfiguration(cfg.route_config, {
          clusterExists: (n) => deps.clusters.has(n),
          validateClustersDefault: deps.staticListener,
        }),
      };
    } else if (cfg.rds) {
      const name = String(cfg.rds.route_config_name ?? '');
      if (!name) throw new ConfigError('rds.route_config_name: value length must be at least 1 characters');
      const src = cfg.rds.config_source ?? {};
      if (!src.ads && !src.api_config_source) {
        throw new ConfigError(
          `rds.config_source: only ADS config sources are supported (got ${Object.keys(src).join(',') || 'none'})`,
        );
      }
      this.routes = { kind: 'rds', provider: deps.rds(name) };
    } else if (cfg.scoped_routes) {
      throw new ConfigError('scoped_routes: scoped RDS is not supported');
    } else {
      throw new ConfigError('HttpConnectionManager has no route_specifier (route_config or rds)');
    }
    this.stats = makeStats(deps.stats, statPrefix, deps.listenerStatPrefix);
    // Filters, in order; the router must be last.
    const ctx: FilterContext = {
      stats: deps.stats,
      logs: deps.logs,
      log: deps.logs.logger('filter'),
      clusters: deps.clusters,
      statPrefix: `http.${statPrefix}.`,
      server: deps.server,
    };
    const list = (cfg.http_filters ?? []) as J[];
    const filters: HttpFilter[] = [];
    const disabled: boolean[] = [];
    let router: HttpFilter | undefined;
    list.forEach((f, i) => {
      if (router) {
        throw new ConfigError(
          `Error: terminal filter named ${router.name} of type envoy.filters.http.router must be the last filter in a http filter chain.`,
        );
      }
      const made = createFilter(f, `http_filters[${i}]`, ctx);
      if (!made) return; // optional-and-unknown
      if (made.terminal) router = made.filter;
      else {
        filters.push(made.filter);
        disabled.push(made.disabled);
      }
    });
    if (!router) {
      const last = list.at(-1);
      throw new ConfigError(
        `Error: non-terminal filter named ${last?.name ?? '<none>'} of type ${last?.typed_config?.['@type']?.split('/').pop() ?? '<none>'} is the last filter in a http filter chain.`,
      );
    }
    this.filters = filters;
    this.filtersDisabled = disabled;
    this.anyFilterDisabled = disabled.includes(true);
    this.routerFilter = router;
    this.suppressEnvoyHeaders = (router as unknown as { suppressEnvoyHeaders?: boolean }).suppressEnvoyHeaders === true;
    this.accessLogs = ((cfg.access_log ?? []) as J[]).map((e, i) =>
      compileAccessLog(e, `access_log[${i}]`, deps.accessLogSinks),
    );
  }

  routeTable(): RouteTable | undefined {
    return this.routes.kind === 'inline' ? this.routes.table : this.routes.provider.table;
  }

  /** Ready to serve: RDS listeners wait for their RouteConfiguration (listener warming). */
  ready(): Promise<void> {
    return this.routes.kind === 'rds' ? this.routes.provider.ready : Promise.resolve();
  }

  close(): void {
    for (const a of this.accessLogs) a.close();
  }

  onNewConnection(): void {
    this.stats.downstream_cx_total.inc();
    this.stats.downstream_cx_http1_total.inc();
    this.stats.downstream_cx_active.add(1);
    this.stats.downstream_cx_http1_active.add(1);
  }

  onConnectionClosed(lengthMs: number, remote: boolean): void {
    this.stats.downstream_cx_active.sub(1);
    this.stats.downstream_cx_http1_active.sub(1);
    this.stats.downstream_cx_destroy.inc();
    (remote ? this.stats.downstream_cx_destroy_remote : this.stats.downstream_cx_destroy_local).inc();
    this.stats.downstream_cx_length_ms.record(lengthMs);
  }

  handle(req: IncomingMessage, res: ServerResponse, connectionId: number): void {
    const s = new ActiveStream(this, req, res, connectionId);
    this.stats.downstream_rq_total.inc();
    this.stats.downstream_rq_http1_total.inc();
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
        if (k !== 'host') lines.push(`'${k}', '${raw[i + 1]}'`);
      }
      log.debug(`request headers complete (end_stream=${end}):\n${lines.join('\n')}`, s.tags);
      if (end) log.debug('request end stream', s.tags);
    }
    if (!this.checkRequest(s)) return;
    this.prepareHeaders(s);
    const table = this.routeTable();
    s.routeTable = table;
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
    if (s.method === 'CONNECT') {
      // CONNECT is an upgrade in Envoy; with no upgrade_configs allowing it the filter chain refuses it.
      this.stats.downstream_rq_ws_on_non_ws_route.inc();
      s.sendLocalReply(403, '', { details: 'upgrade_failed' });
      return;
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
    if (c.useRemoteAddress) {
      const remote = s.req.socket.remoteAddress ?? '';
      if (!c.skipXffAppend) {
        const xff = h['x-forwarded-for'];
        h['x-forwarded-for'] = xff === undefined ? remote : `${Array.isArray(xff) ? xff.join(',') : xff},${remote}`;
      }
      h['x-forwarded-proto'] = 'http';
      h['x-envoy-external-address'] = remote;
    } else if (h['x-forwarded-proto'] === undefined) {
      h['x-forwarded-proto'] = 'http';
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

  /** Runs decoder filters from index `i`, waiting only on filters that return a promise, then the router. */
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
    if (s.done) return;
    s.filterIndex = filters.length;
    routeRequest(s);
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
      if (!s.responseStarted) s.info.responseCode = 0;
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

/** Envoy's HeaderUtility::stripPortFromHost: drops `:port` (only `listenerPort` when given); IPv6 literals kept. */
export function stripPort(host: string, listenerPort?: number): string {
  const colon = host.lastIndexOf(':');
  if (colon < 0) return host;
  const v6End = host.lastIndexOf(']');
  if (v6End > colon) return host;
  const portText = host.slice(colon + 1);
  if (!/^\d+$/.test(portText)) return host;
  if (listenerPort !== undefined && Number(portText) !== listenerPort) return host;
  return host.slice(0, colon);
}

function makeStats(store: StatsStore, prefix: string, listenerPrefix: string): HcmStats {
  const p = `http.${prefix}.`;
  const lp = `${listenerPrefix}http.${prefix}.`;
  return {
    downstream_cx_total: store.counter(p + 'downstream_cx_total'),
    downstream_cx_active: store.gauge(p + 'downstream_cx_active'),
    downstream_cx_http1_total: store.counter(p + 'downstream_cx_http1_total'),
    downstream_cx_http1_active: store.gauge(p + 'downstream_cx_http1_active'),
    downstream_cx_destroy: store.counter(p + 'downstream_cx_destroy'),
    downstream_cx_destroy_remote: store.counter(p + 'downstream_cx_destroy_remote'),
    downstream_cx_destroy_local: store.counter(p + 'downstream_cx_destroy_local'),
    downstream_cx_length_ms: store.histogram(p + 'downstream_cx_length_ms'),
    downstream_cx_protocol_error: store.counter(p + 'downstream_cx_protocol_error'),
    downstream_rq_total: store.counter(p + 'downstream_rq_total'),
    downstream_rq_http1_total: store.counter(p + 'downstream_rq_http1_total'),
    downstream_rq_active: store.gauge(p + 'downstream_rq_active'),
    downstream_rq_completed: store.counter(p + 'downstream_rq_completed'),
    downstream_rq_rx_reset: store.counter(p + 'downstream_rq_rx_reset'),
    downstream_rq_tx_reset: store.counter(p + 'downstream_rq_tx_reset'),
    downstream_rq_timeout: store.counter(p + 'downstream_rq_timeout'),
    downstream_rq_non_relative_path: store.counter(p + 'downstream_rq_non_relative_path'),
    downstream_rq_ws_on_non_ws_route: store.counter(p + 'downstream_rq_ws_on_non_ws_route'),
    downstream_rq_time: store.histogram(p + 'downstream_rq_time'),
    downstream_rq_xx: [1, 2, 3, 4, 5].map((c) => store.counter(`${p}downstream_rq_${c}xx`)),
    listener_rq_xx: [1, 2, 3, 4, 5].map((c) => store.counter(`${lp}downstream_rq_${c}xx`)),
    listener_rq_completed: store.counter(lp + 'downstream_rq_completed'),
    no_route: store.counter(p + 'no_route'),
    no_cluster: store.counter(p + 'no_cluster'),
    rq_redirect: store.counter(p + 'rq_redirect'),
    rq_direct_response: store.counter(p + 'rq_direct_response'),
    rq_total: store.counter(p + 'rq_total'),
    rq_reset_after_downstream_response_started: store.counter(p + 'rq_reset_after_downstream_response_started'),
  };
}
