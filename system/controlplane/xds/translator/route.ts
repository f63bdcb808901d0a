// ListenerIR → its RouteConfiguration: a virtual host per hostname, and per route entry its match, action (forward
// with rewrites, timeouts, retries and mirrors; redirect; direct response), header operations, the policy filters'
// typed_per_filter_config and, in metadata, the TrafficPolicy that supplied each setting (provenance); the hash_policy
// of a consistent-hash backend (cluster-settings.ts).
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import { escapeRe2 } from '../../../shared/regex.ts';
import { BLACKHOLE_CLUSTER } from '../../ir/backend-refs.ts';
import type {
  HeaderOpsIR,
  ListenerIR,
  MatchIR,
  RouteIR,
  StringMatchIR,
  VirtualHostIR,
  WeightedClusterIR,
} from '../../ir/types.ts';
import { fractionalPercent, hasKeys, type Json } from './envoy.ts';
import { routeRateLimits } from './ratelimit.ts';

/** The filter_metadata key under which each route names the policy that supplied each setting. */
export const PROVENANCE_KEY = 'merge.TrafficPolicy.gateway.gwvendor.dev';

const REDIRECT_CODE: Record<number, string | undefined> = {
  301: undefined, // MOVED_PERMANENTLY is the enum's default: left out
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

function stringMatch(m: StringMatchIR): Json {
  return m.type === 'RegularExpression' ? { safe_regex: { regex: m.value } } : { exact: m.value };
}

function routeMatch(m: MatchIR): Json {
  const out: Json = {};
  if (m.path.type === 'Exact') out.path = m.path.value;
  else if (m.path.type === 'RegularExpression') out.safe_regex = { regex: m.path.value };
  // A GRPCRoute's service match: `/<service>/` as a plain prefix (grpc-routes.ts), as Envoy Gateway writes it.
  else if (m.grpc) out.prefix = m.path.value;
  else {
    const p = withoutTrailingSlashes(m.path.value);
    if (p === '') out.prefix = '/';
    else out.path_separated_prefix = p;
  }
  if (m.method || m.headers.length) {
    const headers: Json[] = [];
    if (m.method) headers.push({ name: ':method', string_match: { exact: m.method } });
    for (const h of m.headers) headers.push({ name: h.name.toLowerCase(), string_match: stringMatch(h) });
    out.headers = headers;
  }
  if (m.queryParams.length)
    out.query_parameters = m.queryParams.map((q) => ({ name: q.name, string_match: stringMatch(q) }));
  return out;
}

/** The path without the slashes it ends with (most have none: no regular expression run for those). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--;
  return end === path.length ? path : path.slice(0, end);
}

const HEADER_FIELDS = {
  request: ['request_headers_to_add', 'request_headers_to_remove'],
  response: ['response_headers_to_add', 'response_headers_to_remove'],
} as const;

/**
 * Sets `out`'s <direction>_headers_to_add/_remove from the header operations given, in order (none: unchanged).
 * Called for every route and weighted cluster, most of which have none: nothing is allocated for those.
 */
function setHeaderOps(out: Json, direction: 'request' | 'response', a?: HeaderOpsIR, b?: HeaderOpsIR): void {
  if (!a && !b) return;
  const add: Json[] = [];
  const remove: string[] = [];
  for (const o of [a, b]) {
    if (!o) continue;
    for (const h of o.set)
      add.push({ header: { key: h.name, value: h.value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' });
    for (const h of o.add) add.push({ header: { key: h.name, value: h.value } });
    remove.push(...o.remove);
  }
  const [addField, removeField] = HEADER_FIELDS[direction];
  if (add.length) out[addField] = add;
  if (remove.length) out[removeField] = remove;
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

function routeAction(r: RouteIR, hashPolicies: ReadonlyMap<string, Json[]>): Json {
  if (r.action.type !== 'forward') throw new Error('not a forward action');
  const a: Json = {};
  const backends = r.action.backends;
  // A backendRef's own header filters live on its weighted cluster entry (Envoy applies them to the requests sent
  // there), so a backend with filters is a weighted cluster even when it is the only one.
  const ownHeaders = backends.some((b) => b.requestHeaders || b.responseHeaders);
  if (backends.length === 1 && !ownHeaders) a.cluster = backends[0].cluster;
  else a.weighted_clusters = { clusters: backends.map(weightedCluster) };
  // A backend that did not resolve is weighted to `blackhole-cluster`, which is never defined: Envoy then answers
  // with this code, and the Gateway API wants 500 for requests meant for an invalid backend. A GRPCRoute's keep
  // Envoy's default, 503, which a gRPC client reads as UNAVAILABLE (what GRPCRouteRule.backendRefs asks).
  if (backends.some((b) => b.cluster === BLACKHOLE_CLUSTER) && !r.grpc)
    a.cluster_not_found_response_code = 'INTERNAL_SERVER_ERROR';
  // A consistent-hash backend (BackendConfigPolicy ringHash/maglev hashPolicies) needs the route's hash_policy.
  if (hashPolicies.size) {
    const hashPolicy = backends.find((b) => hashPolicies.has(b.cluster));
    if (hashPolicy) a.hash_policy = hashPolicies.get(hashPolicy.cluster);
  }

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

  // A TrafficPolicy's setting wins over the rule's own field (timeouts, retry, CORS): the policy is the layer a user
  // attaches to change a route, and the provenance in metadata (and explain) names it as what was applied.
  const timeout = r.policy.timeouts?.request ?? r.timeouts?.request;
  if (timeout) a.timeout = timeout;
  if (r.policy.timeouts?.streamIdle) a.idle_timeout = r.policy.timeouts.streamIdle;

  const retry = r.policy.retry ?? r.retry;
  const perTry = r.policy.retry?.perTryTimeout ?? r.timeouts?.backendRequest;
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
  const rateLimits = routeRateLimits(r);
  if (rateLimits?.length) a.rate_limits = rateLimits;
  if (r.mirrors.length) {
    a.request_mirror_policies = r.mirrors.map((m) => ({
      cluster: m.cluster,
      ...(m.perMillion !== undefined ? { runtime_fraction: { default_value: fractionalPercent(m.perMillion) } } : {}),
    }));
  }
  return a;
}

function weightedCluster(b: WeightedClusterIR): Json {
  const out: Json = { name: b.cluster, weight: b.weight };
  setHeaderOps(out, 'request', b.requestHeaders);
  setHeaderOps(out, 'response', b.responseHeaders);
  return out;
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

function translateRoute(r: RouteIR, perFilter: Json, hashPolicies: ReadonlyMap<string, Json[]>): Json {
  const out: Json = { name: r.name, match: routeMatch(r.matchIR) };
  if (r.action.type === 'forward') out.route = routeAction(r, hashPolicies);
  else if (r.action.type === 'redirect') out.redirect = redirectAction(r);
  else out.direct_response = { status: r.action.status };

  if (hasKeys(r.provenance)) out.metadata = { filter_metadata: { [PROVENANCE_KEY]: { ...r.provenance } } };
  if (hasKeys(perFilter)) out.typed_per_filter_config = sortKeys(perFilter);

  const p = r.policy;
  setHeaderOps(out, 'request', r.requestHeaders, p.headerModifiers?.request);
  setHeaderOps(out, 'response', r.responseHeaders, p.headerModifiers?.response);
  return out;
}

function sortKeys(o: Json): Json {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The route configurations of one listener: one of the same name; on an HTTPS port one per TLS chain (its Gateway
 * listener's virtual hosts, and one answering 421 for the hosts other listeners serve: TlsChainIR.misdirected).
 * `perFilter` gives each route's policy filter configs, `hashPolicies` the hash_policy of the Gateway's consistent-hash
 * clusters (a route sending to one carries it).
 */
export function translateRouteConfigs(
  l: ListenerIR,
  perFilter: (r: RouteIR) => Json,
  hashPolicies: ReadonlyMap<string, Json[]>,
): Json[] {
  if (!l.tls) return [routeConfig(l.name, l.virtualHosts, perFilter, hashPolicies)];
  return l.tls.map((c) => {
    const own = new Set(c.virtualHosts ?? []);
    const out = routeConfig(
      c.routeConfig ?? l.name,
      l.virtualHosts.filter((v) => own.has(v.name)),
      perFilter,
      hashPolicies,
    );
    if (c.misdirected?.length) {
      out.virtual_hosts = [
        ...((out.virtual_hosts as Json[] | undefined) ?? []),
        {
          name: `${c.routeConfig}~misdirected`,
          domains: c.misdirected,
          routes: [{ name: 'misdirected', match: { prefix: '/' }, direct_response: { status: 421 } }],
        },
      ];
    }
    return out;
  });
}

function routeConfig(
  name: string,
  vhosts: VirtualHostIR[],
  perFilter: (r: RouteIR) => Json,
  hashPolicies: ReadonlyMap<string, Json[]>,
): Json {
  // A Host header with ":<port>" (a port-forward, a load balancer port) still picks its virtual host, and the backend
  // sees the Host as the client sent it (Gateway API conformance HTTPRouteHostnameIntersection, ListenerPortMatching;
  // redirects keep the port): Envoy's ignore_port_in_host_matching, not the HCM's strip_any_host_port, which rewrites
  // the header.
  const out: Json = { '@type': TYPE_URL.routeConfiguration, name, ignore_port_in_host_matching: true };
  if (vhosts.length) {
    out.virtual_hosts = vhosts.map((v) => {
      const vh: Json = { name: v.name, domains: v.domains };
      if (v.routes.length) vh.routes = v.routes.map((r) => translateRoute(r, perFilter(r), hashPolicies));
      return vh;
    });
  }
  return out;
}
