// CORS → envoy.filters.http.cors: the filter on a listener where some route has a CORS policy, and that route's
// CorsPolicy as its typed_per_filter_config. The policy is the rule's own CORS filter (Gateway API HTTPCORSFilter),
// unless a TrafficPolicy's `cors` reaches the route: the policy wins, as for timeouts and retry (route.ts).
import type { RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.cors';
const CORS = 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors';
const CORS_POLICY = 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy';

export const corsFilter = {
  forListener(routes: readonly RouteIR[]) {
    const used = routes.some((r) => corsOf(r));
    return {
      chain: used ? [{ name: NAME, typed_config: { '@type': CORS } }] : [],
      perRoute: (r: RouteIR): Json => {
        if (r.policy.cors) return { [NAME]: corsPolicy(r.policy.cors) };
        // The Gateway API filter: a preflight from an origin it does not allow is answered by the gateway (no
        // access-control-allow-origin), not forwarded to the backend (conformance HTTPRouteCORS).
        if (r.cors) return { [NAME]: { ...corsPolicy(r.cors), forward_not_matching_preflights: false } };
        return {};
      },
    };
  },
};

const corsOf = (r: RouteIR) => r.policy.cors ?? r.cors;

function corsPolicy(c: NonNullable<RouteIR['policy']['cors']>): Json {
  const out: Json = { '@type': CORS_POLICY };
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
