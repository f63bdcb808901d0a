// IR → xDS: pure functions from one Gateway's IR to Envoy v3 resources in canonical proto3 JSON (snake_case, "@type"
// on each resource, enums by name, durations as "15s", default values left out), as they go on the wire.
import { lookupEnum, TYPE_URL } from '../../shared/envoy/protos.ts';
import { BLACKHOLE_CLUSTER } from '../ir/routes.ts';
import type {
  ClusterIR,
  ExtAuthIR,
  GatewayIR,
  HeaderOpsIR,
  ListenerIR,
  MatchIR,
  RouteIR,
  StringMatchIR,
} from '../ir/types.ts';

export type Json = Record<string, unknown>;

export interface XdsResources {
  listeners: Json[];
  routes: Json[];
  clusters: Json[];
}

/** The filter_metadata key under which each route names the policy that supplied each setting. */
export const PROVENANCE_KEY = 'merge.TrafficPolicy.gateway.gwvendor.dev';

const T = {
  hcm: 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  router: 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
  cors: 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors',
  corsPolicy: 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy',
  localRateLimit: 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
  fault: 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
  extAuthz: 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
  extAuthzPerRoute: 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
};

export const FILTER = {
  cors: 'envoy.filters.http.cors',
  localRateLimit: 'envoy.filters.http.local_ratelimit',
  fault: 'envoy.filters.http.fault',
  router: 'envoy.filters.http.router',
  hcm: 'envoy.filters.network.http_connection_manager',
};

const RATE_LIMIT_STAT_PREFIX = 'http_local_rate_limiter';

const ADS_SOURCE = { ads: {}, resource_api_version: 'V3' };

const REDIRECT_CODE: Record<number, string | undefined> = {
  301: undefined, // MOVED_PERMANENTLY is the enum's default: left out
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

let statusNames: Record<number, string> | undefined;
/** envoy.type.v3.StatusCode by number (the enum is named after the reason phrases, e.g. 403 → "Forbidden"). */
function statusCodeName(code: number): string | number {
  statusNames ??= lookupEnum('envoy.type.v3.StatusCode').valuesById as Record<number, string>;
  return statusNames[code] ?? code;
}

/** Fraction of requests in parts per million → FractionalPercent (HUNDRED when it is a whole percentage). */
function fractionalPercent(perMillion: number): Json {
  if (perMillion % 10_000 === 0) {
    const n = perMillion / 10_000;
    return n ? { numerator: n } : {};
  }
  return { numerator: perMillion, denominator: 'MILLION' };
}

function escapeRe2(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

function stringMatch(m: StringMatchIR): Json {
  return m.type === 'RegularExpression' ? { safe_regex: { regex: m.value } } : { exact: m.value };
}

function routeMatch(m: MatchIR): Json {
  const out: Json = {};
  if (m.path.type === 'Exact') out.path = m.path.value;
  else if (m.path.type === 'RegularExpression') out.safe_regex = { regex: m.path.value };
  else {
    const p = m.path.value.replace(/\/+$/, '');
    if (p === '') out.prefix = '/';
    else out.path_separated_prefix = p;
  }
  const headers: Json[] = [];
  if (m.method) headers.push({ name: ':method', string_match: { exact: m.method } });
  for (const h of m.headers) headers.push({ name: h.name.toLowerCase(), string_match: stringMatch(h) });
  if (headers.length) out.headers = headers;
  if (m.queryParams.length)
    out.query_parameters = m.queryParams.map((q) => ({ name: q.name, string_match: stringMatch(q) }));
  return out;
}

function headersToAdd(ops: (HeaderOpsIR | undefined)[]): { add: Json[]; remove: string[] } {
  const add: Json[] = [];
  const remove: string[] = [];
  for (const o of ops) {
    if (!o) continue;
    for (const h of o.set)
      add.push({ header: { key: h.name, value: h.value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' });
    for (const h of o.add) add.push({ header: { key: h.name, value: h.value } });
    remove.push(...o.remove);
  }
  return { add, remove };
}

/** Gateway API "ReplacePrefixMatch" of `prefix` by `replacement`, in Envoy's terms. */
function prefixReplacement(prefix: string, replacement: string): Json {
  const p = prefix.replace(/\/+$/, '');
  if (p !== '' && replacement !== '/' && !replacement.endsWith('/')) return { prefix_rewrite: replacement };
  // `/foo` → `/`: strip the prefix and the slashes after it; `/` → `/bar`: the path keeps its own slash.
  const sub = replacement.endsWith('/') ? replacement : `${replacement}/`;
  return { regex_rewrite: { pattern: { regex: `^${escapeRe2(p)}/*` }, substitution: sub } };
}

function fullPathReplacement(value: string): Json {
  return { regex_rewrite: { pattern: { regex: '^/.*$' }, substitution: value } };
}

function routeAction(r: RouteIR): Json {
  if (r.action.type !== 'forward') throw new Error('not a forward action');
  const a: Json = {};
  const backends = r.action.backends;
  if (backends.length === 1) a.cluster = backends[0].cluster;
  else a.weighted_clusters = { clusters: backends.map((b) => ({ name: b.cluster, weight: b.weight })) };
  // A backend that did not resolve is weighted to `blackhole-cluster`, which is never defined: Envoy then answers
  // with this code, and the Gateway API wants 500 for requests meant for an invalid backend.
  if (backends.some((b) => b.cluster === BLACKHOLE_CLUSTER))
    a.cluster_not_found_response_code = 'INTERNAL_SERVER_ERROR';

  const pathRewrite = r.rewrite?.path;
  if (pathRewrite?.type === 'ReplaceFullPath') Object.assign(a, fullPathReplacement(pathRewrite.value));
  else if (pathRewrite?.type === 'ReplacePrefixMatch')
    Object.assign(a, prefixReplacement(r.matchIR.path.value, pathRewrite.value));
  else if (r.policy.urlRewrite?.pathRegex) {
    a.regex_rewrite = {
      pattern: { regex: r.policy.urlRewrite.pathRegex.pattern },
      substitution: r.policy.urlRewrite.pathRegex.substitution,
    };
  }
  const host = r.rewrite?.hostname ?? r.policy.urlRewrite?.hostname;
  if (host) a.host_rewrite_literal = host;

  const timeout = r.timeouts?.request ?? r.policy.timeouts?.request;
  if (timeout) a.timeout = timeout;
  if (r.policy.timeouts?.streamIdle) a.idle_timeout = r.policy.timeouts.streamIdle;

  const retry = r.policy.retry;
  const perTry = r.timeouts?.backendRequest ?? retry?.perTryTimeout;
  if (retry || perTry) {
    const rp: Json = {};
    if (retry) {
      rp.retry_on = retry.retryOn.join(',');
      rp.num_retries = retry.attempts;
      if (retry.statusCodes.length) rp.retriable_status_codes = retry.statusCodes;
      if (retry.backoffBaseInterval) rp.retry_back_off = { base_interval: retry.backoffBaseInterval };
    }
    if (perTry) rp.per_try_timeout = perTry;
    a.retry_policy = rp;
  }
  if (r.mirrors.length) {
    a.request_mirror_policies = r.mirrors.map((m) => ({
      cluster: m.cluster,
      ...(m.perMillion !== undefined ? { runtime_fraction: { default_value: fractionalPercent(m.perMillion) } } : {}),
    }));
  }
  return a;
}

function redirectAction(r: RouteIR): Json {
  if (r.action.type !== 'redirect') throw new Error('not a redirect');
  const x = r.action;
  const out: Json = {};
  if (x.scheme) out.scheme_redirect = x.scheme;
  if (x.hostname) out.host_redirect = x.hostname;
  if (x.port) out.port_redirect = x.port;
  if (x.path?.type === 'ReplaceFullPath') out.path_redirect = x.path.value;
  else if (x.path?.type === 'ReplacePrefixMatch')
    Object.assign(out, prefixReplacement(r.matchIR.path.value, x.path.value));
  const code = REDIRECT_CODE[x.statusCode];
  if (code) out.response_code = code;
  return out;
}

function corsPolicy(c: NonNullable<RouteIR['policy']['cors']>): Json {
  const out: Json = { '@type': T.corsPolicy };
  if (c.allowOrigins.length) {
    out.allow_origin_string_match = c.allowOrigins.map((o) =>
      o.regex !== undefined ? { safe_regex: { regex: o.regex } } : { exact: o.exact },
    );
  }
  if (c.allowMethods.length) out.allow_methods = c.allowMethods.join(',');
  if (c.allowHeaders.length) out.allow_headers = c.allowHeaders.join(',');
  if (c.exposeHeaders.length) out.expose_headers = c.exposeHeaders.join(',');
  if (c.maxAge !== undefined) out.max_age = String(c.maxAge);
  if (c.allowCredentials !== undefined) out.allow_credentials = c.allowCredentials;
  return out;
}

/** The ext_authz filters a listener has (one per GatewayExtension its routes use). */
function extAuthFilterNames(l: ListenerIR): Set<string> {
  return new Set(
    l.virtualHosts.flatMap((v) =>
      v.routes.flatMap((r) =>
        r.policy.extAuth && !r.policy.extAuth.disabled ? [r.policy.extAuth.ext.filterName] : [],
      ),
    ),
  );
}

function translateRoute(r: RouteIR, extFilters: Set<string>): Json {
  const out: Json = { name: r.name, match: routeMatch(r.matchIR) };
  if (r.action.type === 'forward') out.route = routeAction(r);
  else if (r.action.type === 'redirect') out.redirect = redirectAction(r);
  else out.direct_response = { status: r.action.status };

  const prov = Object.entries(r.provenance);
  if (prov.length) out.metadata = { filter_metadata: { [PROVENANCE_KEY]: Object.fromEntries(prov) } };

  const perFilter: Json = {};
  const p = r.policy;
  if (p.cors) perFilter[FILTER.cors] = corsPolicy(p.cors);
  // Each ext_authz filter of the listener runs only on the routes whose policy asks for it: the others turn it off.
  const mine = p.extAuth && !p.extAuth.disabled ? p.extAuth.ext.filterName : undefined;
  for (const f of extFilters) if (f !== mine) perFilter[f] = { '@type': T.extAuthzPerRoute, disabled: true };
  if (p.rateLimit) {
    perFilter[FILTER.localRateLimit] = {
      '@type': T.localRateLimit,
      stat_prefix: RATE_LIMIT_STAT_PREFIX,
      token_bucket: {
        max_tokens: p.rateLimit.maxTokens,
        tokens_per_fill: p.rateLimit.tokensPerFill,
        fill_interval: p.rateLimit.fillInterval,
      },
      filter_enabled: { default_value: { numerator: 100 } },
      filter_enforced: { default_value: { numerator: 100 } },
    };
  }
  if (p.faultInjection && (p.faultInjection.delay || p.faultInjection.abort)) {
    const f: Json = { '@type': T.fault };
    if (p.faultInjection.delay) {
      f.delay = {
        fixed_delay: p.faultInjection.delay.fixedDelay,
        percentage: fractionalPercent(p.faultInjection.delay.perMillion),
      };
    }
    if (p.faultInjection.abort) {
      f.abort = {
        http_status: p.faultInjection.abort.httpStatus,
        percentage: fractionalPercent(p.faultInjection.abort.perMillion),
      };
    }
    perFilter[FILTER.fault] = f;
  }
  if (Object.keys(perFilter).length) out.typed_per_filter_config = sortKeys(perFilter);

  const req = headersToAdd([r.requestHeaders, p.headerModifiers?.request]);
  const res = headersToAdd([r.responseHeaders, p.headerModifiers?.response]);
  if (req.add.length) out.request_headers_to_add = req.add;
  if (req.remove.length) out.request_headers_to_remove = req.remove;
  if (res.add.length) out.response_headers_to_add = res.add;
  if (res.remove.length) out.response_headers_to_remove = res.remove;
  return out;
}

function sortKeys(o: Json): Json {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function extAuthFilter(e: ExtAuthIR): Json {
  const cfg: Json = {
    '@type': T.extAuthz,
    http_service: {
      server_uri: { uri: e.uri, cluster: e.cluster.name, timeout: e.timeout },
      ...(e.pathPrefix ? { path_prefix: e.pathPrefix } : {}),
    },
  };
  if (e.failOpen) cfg.failure_mode_allow = true;
  cfg.status_on_error = { code: statusCodeName(e.statusOnError) };
  if (e.allowedHeaders.length) {
    cfg.allowed_headers = { patterns: e.allowedHeaders.map((h) => ({ exact: h.toLowerCase(), ignore_case: true })) };
  }
  return { name: e.filterName, typed_config: cfg };
}

function translateListener(l: ListenerIR, ir: GatewayIR): Json {
  const routes = l.virtualHosts.flatMap((v) => v.routes);
  const filters: Json[] = [];
  if (routes.some((r) => r.policy.cors)) filters.push({ name: FILTER.cors, typed_config: { '@type': T.cors } });
  const extNames = extAuthFilterNames(l);
  for (const e of ir.extAuth) if (extNames.has(e.filterName)) filters.push(extAuthFilter(e));
  if (routes.some((r) => r.policy.rateLimit)) {
    filters.push({
      name: FILTER.localRateLimit,
      typed_config: { '@type': T.localRateLimit, stat_prefix: RATE_LIMIT_STAT_PREFIX },
    });
  }
  if (routes.some((r) => r.policy.faultInjection))
    filters.push({ name: FILTER.fault, typed_config: { '@type': T.fault } });
  filters.push({ name: FILTER.router, typed_config: { '@type': T.router } });
  return {
    '@type': TYPE_URL.listener,
    name: l.name,
    address: { socket_address: { address: '0.0.0.0', port_value: l.port } },
    filter_chains: [
      {
        filters: [
          {
            name: FILTER.hcm,
            typed_config: {
              '@type': T.hcm,
              stat_prefix: 'http',
              rds: { config_source: ADS_SOURCE, route_config_name: l.name },
              http_filters: filters,
              // A Host header with ":<port>" (a port-forward, a load balancer port) still matches the domains.
              strip_any_host_port: true,
            },
          },
        ],
      },
    ],
  };
}

function translateRouteConfig(l: ListenerIR): Json {
  const out: Json = { '@type': TYPE_URL.routeConfiguration, name: l.name };
  const extFilters = extAuthFilterNames(l);
  if (l.virtualHosts.length) {
    out.virtual_hosts = l.virtualHosts.map((v) => {
      const vh: Json = { name: v.name, domains: v.domains };
      if (v.routes.length) vh.routes = v.routes.map((r) => translateRoute(r, extFilters));
      return vh;
    });
  }
  return out;
}

export function translateCluster(c: ClusterIR): Json {
  return {
    '@type': TYPE_URL.cluster,
    name: c.name,
    type: 'EDS',
    eds_cluster_config: { eds_config: ADS_SOURCE },
    connect_timeout: '5s',
  };
}

/** The Listeners, RouteConfigurations and Clusters of one Gateway. */
export function translateGateway(ir: GatewayIR): XdsResources {
  return {
    listeners: ir.listeners.map((l) => translateListener(l, ir)),
    routes: ir.listeners.map(translateRouteConfig),
    clusters: ir.clusters.map(translateCluster),
  };
}

export interface EndpointAddress {
  address: string;
  port: number;
}

/** The ClusterLoadAssignment of one cluster: its ready endpoints. */
export function translateEndpoints(cluster: string, endpoints: EndpointAddress[]): Json {
  const out: Json = { '@type': TYPE_URL.clusterLoadAssignment, cluster_name: cluster };
  if (endpoints.length) {
    out.endpoints = [
      {
        lb_endpoints: endpoints.map((e) => ({
          endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
        })),
      },
    ];
  }
  return out;
}
