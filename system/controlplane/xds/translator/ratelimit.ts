// TrafficPolicy `rateLimit.global` → envoy.filters.http.ratelimit: one filter per GatewayExtension (type rateLimit)
// the listener's routes use (`envoy.filters.http.ratelimit/<ns>/<name>`: its domain, the service as
// rate_limit_service.grpc_service.envoy_grpc on the extension's HTTP/2 cluster, timeout, failure_mode_deny from
// failOpen), turned off (FilterConfig.disabled) on the routes that use another or none; and on each route that uses
// one, RouteAction.rate_limits: one entry per descriptor, its actions in order (remote_address, request_headers,
// generic_key), as Envoy Gateway's global rate limit writes them (internal/xds/translator/ratelimit.go).
import type { RateLimitEntryIR, RateLimitExtIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const RATE_LIMIT = 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit';
const FILTER_CONFIG = 'type.googleapis.com/envoy.config.route.v3.FilterConfig';

function used(routes: readonly RouteIR[]): Map<string, RateLimitExtIR> {
  const out = new Map<string, RateLimitExtIR>();
  for (const r of routes) {
    const g = r.policy.rateLimit?.global;
    if (g) out.set(g.ext.filterName, g.ext);
  }
  return new Map([...out].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

function filter(e: RateLimitExtIR): Json {
  return {
    name: e.filterName,
    typed_config: {
      '@type': RATE_LIMIT,
      domain: e.domain,
      timeout: e.timeout,
      ...(e.failOpen ? {} : { failure_mode_deny: true }),
      rate_limit_service: {
        grpc_service: {
          envoy_grpc: { cluster_name: e.cluster.name, ...(e.authority ? { authority: e.authority } : {}) },
        },
        transport_api_version: 'V3',
      },
    },
  };
}

export const rateLimitFilter = {
  forListener(routes: readonly RouteIR[]) {
    const exts = used(routes);
    return {
      chain: [...exts.values()].map(filter),
      perRoute(r: RouteIR): Json {
        const mine = r.policy.rateLimit?.global?.ext.filterName;
        const out: Json = {};
        for (const f of exts.keys()) if (f !== mine) out[f] = { '@type': FILTER_CONFIG, disabled: true };
        return out;
      },
    };
  },
};

function action(e: RateLimitEntryIR): Json {
  if (e.kind === 'remoteAddress') return { remote_address: {} };
  if (e.kind === 'header') return { request_headers: { header_name: e.name, descriptor_key: e.key } };
  return { generic_key: { descriptor_value: e.value, ...(e.key ? { descriptor_key: e.key } : {}) } };
}

/** RouteAction.rate_limits of a route with a global rate limit (undefined without one). */
export function routeRateLimits(r: RouteIR): Json[] | undefined {
  const g = r.policy.rateLimit?.global;
  if (!g) return undefined;
  return g.descriptors.filter((d) => d.length > 0).map((d) => ({ actions: d.map(action) }));
}
