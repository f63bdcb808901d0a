// envoy.filters.http.cors: the policy comes from the route (typed_per_filter_config CorsPolicy, or the legacy
// virtual host / route `cors` field). Preflights from an allowed origin are answered here; other CORS requests get
// access-control-allow-origin (and credentials, expose headers) on the response.
import { ConfigError, fraction, inFraction } from '../config/errors.ts';
import { compileStringMatcher, type StringMatch } from '../config/matchers.ts';
import type { Counter } from '../stats.ts';
import { isDisabled } from './disabled.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';

export interface CorsPolicy {
  origins: StringMatch[];
  anyOrigin: boolean;
  allowMethods?: string;
  allowHeaders?: string;
  exposeHeaders?: string;
  maxAge?: string;
  allowCredentials: boolean;
  enabled: number;
  forwardNotMatchingPreflights: boolean;
  allowPrivateNetworkAccess: boolean;
}

export function compileCorsPolicy(p: J, where: string): CorsPolicy {
  const matchers = (p.allow_origin_string_match ?? []) as J[];
  const anyOrigin = matchers.some((m) => m.exact === '*');
  if (p.max_age !== undefined && !/^\d*$/.test(String(p.max_age))) {
    throw new ConfigError(`${where}.max_age: value does not match regex pattern "^\\d+$"`);
  }
  return {
    origins: matchers.map((m, i) => compileStringMatcher(m, `${where}.allow_origin_string_match[${i}]`)),
    anyOrigin,
    allowMethods: p.allow_methods || undefined,
    allowHeaders: p.allow_headers || undefined,
    exposeHeaders: p.expose_headers || undefined,
    maxAge: p.max_age || undefined,
    allowCredentials: p.allow_credentials === true,
    enabled: p.filter_enabled ? fraction(p.filter_enabled.default_value, 1) : 1,
    forwardNotMatchingPreflights: p.forward_not_matching_preflights !== false,
    allowPrivateNetworkAccess: p.allow_private_network_access === true,
  };
}

const CORS_STATE = Symbol('cors');

/**
 * A `*` allow list answers a preflight with what it asked for, as Envoy's filter does (cors_filter.cc: `allow_methods
 * == "*"` → the request's access-control-request-method): per the Fetch standard `*` is only a wildcard for requests
 * without credentials, and Gateway API v1.6.1 HTTPCORSFilter says that with `*` and allowCredentials true "the gateway
 * must not return `*`" (conformance HTTPRouteCORS).
 */
function wildcardEcho(allowed: string | undefined, requested: string | undefined): string | undefined {
  if (allowed === '*') return requested ?? '';
  return allowed;
}

export const corsFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.cors',
  configTypes: ['envoy.extensions.filters.http.cors.v3.Cors'],
  perRouteTypes: ['envoy.extensions.filters.http.cors.v3.CorsPolicy'],
  parsePerRoute: (c, where) => compileCorsPolicy(c, where),
  create(name, _config, ctx) {
    const originValid: Counter = ctx.stats.counter(`${ctx.statPrefix}cors.origin_valid`);
    const originInvalid: Counter = ctx.stats.counter(`${ctx.statPrefix}cors.origin_invalid`);
    const policyOf = (s: FilterStream): CorsPolicy | undefined => {
      const named = s.perFilterConfig<CorsPolicy>(name);
      if (isDisabled(named)) return undefined;
      return named ?? s.perFilterConfig<CorsPolicy>('\u0000legacy_cors');
    };
    return {
      name,
      decodeHeaders(s) {
        const policy = policyOf(s);
        if (!policy) return true;
        if (!inFraction(policy.enabled)) return true;
        const origin = s.header('origin');
        if (!origin) return true;
        const allowed = policy.anyOrigin || policy.origins.some((m) => m(origin));
        const preflight = s.method === 'OPTIONS' && !!s.header('access-control-request-method');
        if (allowed) {
          originValid.inc();
          (s as unknown as Record<symbol, unknown>)[CORS_STATE] = { policy, origin };
        } else originInvalid.inc();
        if (!preflight || (!allowed && policy.forwardNotMatchingPreflights)) return true;
        // Envoy answers the preflight itself (200, no body), the origin only when allowed; its reply also passes the
        // filter's own encodeHeaders (expose headers for an allowed origin), which a local reply from this filter skips
        // here, hence set now.
        const h: Record<string, string> = {};
        if (allowed) h['access-control-allow-origin'] = origin;
        if (allowed && policy.exposeHeaders) h['access-control-expose-headers'] = policy.exposeHeaders;
        if (policy.allowCredentials) h['access-control-allow-credentials'] = 'true';
        const allowMethods = wildcardEcho(policy.allowMethods, s.header('access-control-request-method'));
        const allowHeaders = wildcardEcho(policy.allowHeaders, s.header('access-control-request-headers'));
        if (allowMethods !== undefined) h['access-control-allow-methods'] = allowMethods;
        if (allowHeaders !== undefined) h['access-control-allow-headers'] = allowHeaders;
        if (policy.maxAge) h['access-control-max-age'] = policy.maxAge;
        if (policy.allowPrivateNetworkAccess && s.header('access-control-request-private-network') === 'true') {
          h['access-control-allow-private-network'] = 'true';
        }
        s.sendLocalReply(200, '', { headers: h, details: 'cors_response', fromFilter: s.filterIndex });
        return false;
      },
      encodeHeaders(s, _status, headers) {
        const st = (s as unknown as Record<symbol, { policy: CorsPolicy; origin: string } | undefined>)[CORS_STATE];
        if (!st) return;
        headers['access-control-allow-origin'] = st.origin;
        if (st.policy.allowCredentials) headers['access-control-allow-credentials'] = 'true';
        if (st.policy.exposeHeaders) headers['access-control-expose-headers'] = st.policy.exposeHeaders;
      },
    };
  },
};
