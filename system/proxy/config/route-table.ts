// A RouteConfiguration compiled for lookups: virtual hosts by domain (exact in a hash map, wildcards grouped by
// length so a lookup costs one probe per distinct wildcard length, never one per virtual host), then the first
// route of that virtual host whose match accepts the request, as Envoy's config_impl does.

import type { Re2 } from '../../shared/regex.ts';
import { parsePerFilterConfig } from '../filters/registry.ts';
import { ConfigError, durationMs, fraction, inFraction } from './errors.ts';
import { compileHashPolicies } from './hash-policy.ts';
import { compileHeaderMutations, EMPTY_MUTATION, type HeaderMutation } from './headers.ts';
import { stripPort } from './host-port.ts';
import { compileHeaderMatcher, compileQueryMatcher, compileRegex } from './matchers.ts';
import { compileRateLimits } from './rate-limits.ts';
import type {
  Action,
  CompiledRoute,
  MatchInput,
  MatchSpec,
  RetryPolicy,
  RouteActionConfig,
  VirtualHost,
} from './route.ts';
import { compileUpgradeConfigs } from './upgrade-config.ts';

type J = Record<string, any>;

const REDIRECT_CODES: Record<string, number> = {
  MOVED_PERMANENTLY: 301,
  FOUND: 302,
  SEE_OTHER: 303,
  TEMPORARY_REDIRECT: 307,
  PERMANENT_REDIRECT: 308,
};

const NOT_FOUND_CODES: Record<string, number> = {
  SERVICE_UNAVAILABLE: 503,
  NOT_FOUND: 404,
  INTERNAL_SERVER_ERROR: 500,
};

export interface CompileOptions {
  /** When set, every cluster a route names must exist (validate_clusters). */
  clusterExists?: (name: string) => boolean;
  /** validate_clusters default: true for static and inline route configs, false for RDS. */
  validateClustersDefault: boolean;
}

export class RouteTable {
  readonly name: string;
  readonly virtualHosts: VirtualHost[];
  private readonly exact = new Map<string, VirtualHost>();
  private readonly suffixLengths: number[] = [];
  private readonly suffixes = new Map<number, Map<string, VirtualHost>>();
  private readonly prefixLengths: number[] = [];
  private readonly prefixes = new Map<number, Map<string, VirtualHost>>();
  private defaultVhost: VirtualHost | undefined;
  /** RouteConfiguration.ignore_port_in_host_matching: a Host's `:port` is left out when picking the virtual host. */
  readonly ignorePortInHostMatching: boolean;

  constructor(name: string, vhosts: VirtualHost[], ignorePortInHostMatching = false) {
    this.name = name;
    this.virtualHosts = vhosts;
    this.ignorePortInHostMatching = ignorePortInHostMatching;
    for (const vh of vhosts) {
      for (const raw of vh.domains) {
        const d = raw.toLowerCase();
        if (d === '*') {
          if (this.defaultVhost) throw duplicate(raw, name);
          this.defaultVhost = vh;
        } else if (d.startsWith('*')) {
          add(this.suffixes, this.suffixLengths, d.slice(1), vh, raw, name);
        } else if (d.endsWith('*')) {
          add(this.prefixes, this.prefixLengths, d.slice(0, -1), vh, raw, name);
        } else {
          if (this.exact.has(d)) throw duplicate(raw, name);
          this.exact.set(d, vh);
        }
      }
    }
    this.suffixLengths.sort((a, b) => b - a);
    this.prefixLengths.sort((a, b) => b - a);
  }

  /** Envoy's search order: exact, longest suffix wildcard, longest prefix wildcard, then `*`. */
  findVirtualHost(host: string): VirtualHost | undefined {
    const h = (this.ignorePortInHostMatching ? stripPort(host) : host).toLowerCase();
    const exact = this.exact.get(h);
    if (exact) return exact;
    for (const len of this.suffixLengths) {
      // A wildcard matches at least one character.
      if (h.length <= len) continue;
      const vh = this.suffixes.get(len)!.get(h.slice(h.length - len));
      if (vh) return vh;
    }
    for (const len of this.prefixLengths) {
      if (h.length <= len) continue;
      const vh = this.prefixes.get(len)!.get(h.slice(0, len));
      if (vh) return vh;
    }
    return this.defaultVhost;
  }

  route(host: string, input: MatchInput): CompiledRoute | undefined {
    const vh = this.findVirtualHost(host);
    if (!vh) return undefined;
    for (const r of vh.routes) if (r.matches(input)) return r;
    return undefined;
  }

  /** Every cluster name the table routes to (for validate_clusters and mirror checks). */
  clusterNames(): Set<string> {
    const out = new Set<string>();
    for (const vh of this.virtualHosts) {
      for (const r of vh.routes) {
        if (r.action.kind !== 'route') continue;
        if (r.action.cluster) out.add(r.action.cluster);
        for (const w of r.action.weighted?.clusters ?? []) out.add(w.name);
        for (const m of r.action.mirrors) out.add(m.cluster);
      }
    }
    return out;
  }
}

function duplicate(domain: string, rc: string): ConfigError {
  return new ConfigError(
    `Only unique values for domains are permitted. Duplicate entry of domain ${domain} in route ${rc}`,
  );
}

function add(
  maps: Map<number, Map<string, VirtualHost>>,
  lengths: number[],
  key: string,
  vh: VirtualHost,
  raw: string,
  rc: string,
): void {
  let m = maps.get(key.length);
  if (!m) {
    m = new Map();
    maps.set(key.length, m);
    lengths.push(key.length);
  }
  if (m.has(key)) throw duplicate(raw, rc);
  m.set(key, vh);
}

function perFilterMap(typed: J | undefined, where: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, any] of Object.entries(typed ?? {})) {
    const parsed = parsePerFilterConfig(any as J, `${where}.typed_per_filter_config["${name}"]`);
    if (parsed !== undefined) out.set(name, parsed);
  }
  return out;
}

function compileRetry(p: J | undefined): RetryPolicy | undefined {
  if (!p) return undefined;
  const base = durationMs(p.retry_back_off?.base_interval) ?? 25;
  return {
    retryOn: new Set(
      String(p.retry_on ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    numRetries: p.num_retries ?? 1,
    perTryTimeoutMs: durationMs(p.per_try_timeout) ?? 0,
    retriableStatusCodes: new Set<number>(p.retriable_status_codes ?? []),
    baseIntervalMs: base,
    maxIntervalMs: durationMs(p.retry_back_off?.max_interval) ?? base * 10,
  };
}

function rewriteSpec(r: J | undefined, where: string): { re: Re2; sub: string } | undefined {
  if (!r) return undefined;
  const re = compileRegex(r.pattern, `${where}.pattern`);
  const sub = String(r.substitution ?? '');
  const err = re.rewriteError(sub);
  if (err) throw new ConfigError(`${where}.substitution: ${err}`);
  return { re, sub };
}

function compileMatch(m: J | undefined, where: string): { spec: MatchSpec; matches: (i: MatchInput) => boolean } {
  if (!m) throw new ConfigError(`${where}: value is required`);
  const caseSensitive = m.case_sensitive !== false;
  let spec: MatchSpec;
  let pathTest: (p: string) => boolean;
  if (m.prefix !== undefined) {
    const v = String(m.prefix);
    spec = { kind: 'prefix', value: v, caseSensitive };
    const lv = v.toLowerCase();
    pathTest = caseSensitive ? (p) => p.startsWith(v) : (p) => p.toLowerCase().startsWith(lv);
  } else if (m.path !== undefined) {
    const v = String(m.path);
    spec = { kind: 'path', value: v, caseSensitive };
    const lv = v.toLowerCase();
    pathTest = caseSensitive ? (p) => p === v : (p) => p.toLowerCase() === lv;
  } else if (m.safe_regex !== undefined) {
    const re = compileRegex(m.safe_regex, `${where}.safe_regex`);
    spec = { kind: 'regex', value: re.pattern, caseSensitive };
    pathTest = (p) => re.matchesFully(p);
  } else if (m.path_separated_prefix !== undefined) {
    const v = String(m.path_separated_prefix);
    if (!v.startsWith('/') || (v.length > 1 && v.endsWith('/')) || /[?#]/.test(v)) {
      throw new ConfigError(
        `${where}.path_separated_prefix: value does not match regex pattern "^[^?#]+[^?#/]$" (got ${JSON.stringify(v)})`,
      );
    }
    spec = { kind: 'path_separated_prefix', value: v, caseSensitive };
    const lv = v.toLowerCase();
    pathTest = (p) => {
      const q = caseSensitive ? p : p.toLowerCase();
      const want = caseSensitive ? v : lv;
      return q === want || (q.startsWith(want) && q.charCodeAt(want.length) === 47) /* / */;
    };
  } else if (m.connect_matcher !== undefined) {
    throw new ConfigError(`${where}.connect_matcher: CONNECT routes are not supported (HTTP/1.1 routes only)`);
  } else if (m.path_match_policy !== undefined) {
    throw new ConfigError(`${where}.path_match_policy: path match extensions are not supported`);
  } else {
    throw new ConfigError(
      `${where}: RouteMatch has no path specifier (prefix, path, safe_regex or path_separated_prefix)`,
    );
  }
  const headers = (m.headers ?? []).map((h: J, i: number) => compileHeaderMatcher(h, `${where}.headers[${i}]`));
  const queries = (m.query_parameters ?? []).map((q: J, i: number) =>
    compileQueryMatcher(q, `${where}.query_parameters[${i}]`),
  );
  const grpcOnly = m.grpc !== undefined;
  const runtime = m.runtime_fraction?.default_value ? fraction(m.runtime_fraction.default_value, 1) : 1;
  if (headers.length === 0 && queries.length === 0 && !grpcOnly && runtime >= 1) {
    return { spec, matches: (i) => pathTest(i.path) };
  }
  return {
    spec,
    matches: (i) => {
      if (!pathTest(i.path)) return false;
      for (const h of headers) if (!h(i.header)) return false;
      if (queries.length > 0) {
        const params = new URLSearchParams(i.query);
        for (const q of queries) if (!q(params)) return false;
      }
      if (grpcOnly && !(i.header('content-type') ?? '').startsWith('application/grpc')) return false;
      if (!inFraction(runtime)) return false;
      return true;
    },
  };
}

function dataSource(d: J | undefined, where: string): Buffer | undefined {
  if (!d) return undefined;
  if (d.inline_string !== undefined) return Buffer.from(String(d.inline_string));
  if (d.inline_bytes !== undefined) return Buffer.from(String(d.inline_bytes), 'base64');
  if (d.environment_variable !== undefined) {
    const v = process.env[d.environment_variable];
    if (v === undefined)
      throw new ConfigError(`${where}: Environment variable doesn't exist: ${d.environment_variable}`);
    return Buffer.from(v);
  }
  if (d.filename !== undefined) {
    throw new ConfigError(
      `${where}.filename: file data sources are not supported in route responses; use inline_string`,
    );
  }
  return undefined;
}

function compileAction(r: J, vh: J, where: string, opts: CompileOptions, validate: boolean): Action {
  if (r.route) {
    const a = r.route as J;
    const w = `${where}.route`;
    if (a.prefix_rewrite !== undefined && a.regex_rewrite !== undefined) {
      throw new ConfigError(`${w}: Cannot specify both prefix_rewrite and regex_rewrite`);
    }
    if (a.prefix_rewrite !== undefined && r.match?.safe_regex !== undefined) {
      throw new ConfigError(`${w}: Cannot use prefix_rewrite with regex path matching (use regex_rewrite)`);
    }
    let weighted: RouteActionConfig['weighted'];
    if (a.weighted_clusters) {
      const list = (a.weighted_clusters.clusters ?? []) as J[];
      if (list.length === 0)
        throw new ConfigError(`${w}.weighted_clusters.clusters: value must contain at least 1 item(s)`);
      const clusters = list.map((c, i) => {
        const here = `${w}.weighted_clusters.clusters[${i}]`;
        if (!c.name && !c.cluster_header) throw new ConfigError(`${here}: name is required`);
        if (c.cluster_header) throw new ConfigError(`${here}.cluster_header: not supported`);
        const mutations = compileHeaderMutations(c, here);
        return {
          name: String(c.name),
          weight: Number(c.weight ?? 0),
          requestMutation: mutations.request,
          responseMutation: mutations.response,
          perFilter: perFilterMap(c.typed_per_filter_config, here),
          hostRewriteLiteral: c.host_rewrite_literal,
        };
      });
      const total = clusters.reduce((s, c) => s + c.weight, 0);
      const declared = a.weighted_clusters.total_weight;
      if (declared !== undefined && declared !== total) {
        throw new ConfigError(
          `${w}.weighted_clusters: Sum of weights in the weighted_cluster must add up to ${declared}`,
        );
      }
      if (total === 0)
        throw new ConfigError(`${w}.weighted_clusters: Sum of weights in the weighted_cluster must be greater than 0`);
      weighted = { clusters, total };
    } else if (!a.cluster && !a.cluster_header) {
      if (a.cluster_specifier_plugin || a.inline_cluster_specifier_plugin) {
        throw new ConfigError(`${w}: cluster specifier plugins are not supported`);
      }
      throw new ConfigError(
        `${w}: RouteAction has no cluster_specifier (cluster, cluster_header or weighted_clusters)`,
      );
    }
    const mirrors = ((a.request_mirror_policies ?? []) as J[]).map((m, i) => {
      if (!m.cluster) throw new ConfigError(`${w}.request_mirror_policies[${i}].cluster: value is required`);
      return { cluster: String(m.cluster), fraction: fraction(m.runtime_fraction?.default_value, 1) };
    });
    const action: RouteActionConfig = {
      kind: 'route',
      cluster: a.cluster,
      clusterHeader: a.cluster_header?.toLowerCase(),
      weighted,
      notFoundCode: NOT_FOUND_CODES[a.cluster_not_found_response_code ?? 'SERVICE_UNAVAILABLE'] ?? 503,
      prefixRewrite: a.prefix_rewrite,
      regexRewrite: rewriteSpec(a.regex_rewrite, `${w}.regex_rewrite`),
      hostRewriteLiteral: a.host_rewrite_literal,
      autoHostRewrite: a.auto_host_rewrite === true,
      hostRewriteHeader: a.host_rewrite_header?.toLowerCase(),
      hostRewritePathRegex: rewriteSpec(a.host_rewrite_path_regex, `${w}.host_rewrite_path_regex`),
      timeoutMs: durationMs(a.timeout) ?? 15_000,
      retry: compileRetry(a.retry_policy ?? vh.retry_policy),
      mirrors,
      includeAttemptCount: vh.include_request_attempt_count === true,
      includeAttemptCountInResponse: vh.include_attempt_count_in_response === true,
      upgrades: a.upgrade_configs?.length ? compileUpgradeConfigs(a.upgrade_configs, w) : undefined,
      idleTimeoutMs: durationMs(a.idle_timeout),
      rateLimits: compileRateLimits(a.rate_limits, w),
      hashPolicy: compileHashPolicies(a.hash_policy, w),
    };
    if (validate && opts.clusterExists) {
      const names = [
        action.cluster,
        ...(weighted?.clusters.map((c) => c.name) ?? []),
        ...mirrors.map((m) => m.cluster),
      ];
      for (const n of names) {
        if (n && !opts.clusterExists(n)) throw new ConfigError(`route: unknown cluster '${n}'`);
      }
    }
    return action;
  }
  if (r.redirect) {
    const d = r.redirect as J;
    const w = `${where}.redirect`;
    if (d.prefix_rewrite !== undefined && r.match?.safe_regex !== undefined) {
      throw new ConfigError(`${w}: Cannot use prefix_rewrite with regex path matching`);
    }
    return {
      kind: 'redirect',
      scheme: d.https_redirect ? 'https' : d.scheme_redirect,
      host: d.host_redirect,
      port: d.port_redirect,
      pathRedirect: d.path_redirect,
      prefixRewrite: d.prefix_rewrite,
      regexRewrite: rewriteSpec(d.regex_rewrite, `${w}.regex_rewrite`),
      code: REDIRECT_CODES[d.response_code ?? 'MOVED_PERMANENTLY'] ?? 301,
      stripQuery: d.strip_query === true,
    };
  }
  if (r.direct_response) {
    const d = r.direct_response as J;
    const status = Number(d.status ?? 0);
    if (status < 200 || status >= 600) {
      throw new ConfigError(`${where}.direct_response.status: value must be inside range [200, 600)`);
    }
    return { kind: 'direct', status, body: dataSource(d.body, `${where}.direct_response.body`) };
  }
  if (r.filter_action || r.non_forwarding_action) {
    throw new ConfigError(`${where}: filter_action and non_forwarding_action routes are not supported`);
  }
  throw new ConfigError(`${where}: Route has no action (route, redirect or direct_response)`);
}

/** Compiles a RouteConfiguration (canonical JSON). Throws ConfigError naming the problem. */
export function compileRouteConfiguration(rc: J, opts: CompileOptions): RouteTable {
  const name = String(rc.name ?? '');
  const validate = rc.validate_clusters ?? opts.validateClustersDefault;
  const mostSpecificWins = rc.most_specific_header_mutations_wins === true;
  const { request: rcReq, response: rcResp } = compileHeaderMutations(rc, '');
  const rcPerFilter = perFilterMap(rc.typed_per_filter_config, '');
  if ((rc.vhds as J | undefined) !== undefined) throw new ConfigError('vhds: VHDS is not supported');
  const vhosts: VirtualHost[] = [];
  const names = new Set<string>();
  ((rc.virtual_hosts ?? []) as J[]).forEach((v, vi) => {
    const vw = `virtual_hosts[${vi}]`;
    if (!v.name) throw new ConfigError(`${vw}.name: value length must be at least 1 characters`);
    if (names.has(v.name)) {
      throw new ConfigError(`Only unique values for virtual host names are permitted. Duplicate entry of ${v.name}`);
    }
    names.add(v.name);
    if (!Array.isArray(v.domains) || v.domains.length === 0) {
      throw new ConfigError(`${vw}.domains: value must contain at least 1 item(s)`);
    }
    if (v.require_tls !== undefined && v.require_tls !== 'NONE') {
      throw new ConfigError(`${vw}.require_tls: TLS is not supported by this proxy`);
    }
    const { request: vhReq, response: vhResp } = compileHeaderMutations(v, vw);
    const vhPerFilter = perFilterMap(v.typed_per_filter_config, vw);
    if (v.cors !== undefined)
      vhPerFilter.set(
        '\u0000legacy_cors',
        parsePerFilterConfig(
          { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy', ...v.cors },
          `${vw}.cors`,
        ),
      );
    const vh: VirtualHost = { name: v.name, domains: v.domains, routes: [] };
    ((v.routes ?? []) as J[]).forEach((r, ri) => {
      const rw = `${vw}.routes[${ri}]`;
      const { spec, matches } = compileMatch(r.match, `${rw}.match`);
      const action = compileAction(r, v, rw, opts, validate);
      const { request: rReq, response: rResp } = compileHeaderMutations(r, rw);
      const perFilter = new Map<string, unknown>([
        ...rcPerFilter,
        ...vhPerFilter,
        ...perFilterMap(r.typed_per_filter_config, rw),
      ]);
      if (r.route?.cors !== undefined)
        perFilter.set(
          '\u0000legacy_cors',
          parsePerFilterConfig(
            { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy', ...r.route.cors },
            `${rw}.route.cors`,
          ),
        );
      const order = (a: HeaderMutation, b: HeaderMutation, c: HeaderMutation) =>
        [a, b, c].filter((m) => m !== EMPTY_MUTATION && (m.add.length > 0 || m.remove.length > 0));
      // Envoy applies the route's mutations first and the route config's last, so the most general wins unless
      // most_specific_header_mutations_wins reverses the order.
      vh.routes.push({
        name: String(r.name ?? ''),
        spec,
        matches,
        action,
        requestMutations: mostSpecificWins ? order(rcReq, vhReq, rReq) : order(rReq, vhReq, rcReq),
        responseMutations: mostSpecificWins ? order(rcResp, vhResp, rResp) : order(rResp, vhResp, rcResp),
        perFilter,
        vhost: vh,
      });
    });
    vhosts.push(vh);
  });
  return new RouteTable(name, vhosts, rc.ignore_port_in_host_matching === true);
}
