// TrafficPolicy `jwt` → envoy.filters.http.jwt_authn: on a listener where some route asks for JWT, one filter with
// every provider of those routes (named `<ns>/<policy>/<provider>`) and one requirement per policy
// (`requirement_map`, `<ns>/<policy>`: its only provider, or requires_any of them); each such route names its
// policy's requirement (PerRouteConfig.requirement_name). The filter has no `rules`: a route without a
// requirement is not checked (Envoy's filter.cc: no verifier, allowed). Shapes: jwt_authn/v3/config.proto.
import type { JwtIR, JwtProviderIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.jwt_authn';
const JWT_AUTHN = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig';

export const jwtAuthnFilter = {
  forListener(routes: readonly RouteIR[]) {
    const reqs = new Map<string, JwtIR>();
    for (const r of routes) if (r.policy.jwt) reqs.set(r.policy.jwt.requirement, r.policy.jwt);
    if (!reqs.size) return { chain: [], perRoute: () => ({}) };
    const providers: Json = {};
    const requirementMap: Json = {};
    for (const name of [...reqs.keys()].sort()) {
      const j = reqs.get(name)!;
      for (const p of j.providers) providers[p.name] = provider(p);
      requirementMap[name] =
        j.providers.length === 1
          ? { provider_name: j.providers[0]!.name }
          : { requires_any: { requirements: j.providers.map((p) => ({ provider_name: p.name })) } };
    }
    return {
      chain: [{ name: NAME, typed_config: { '@type': JWT_AUTHN, providers, requirement_map: requirementMap } }],
      perRoute(r: RouteIR): Json {
        const j = r.policy.jwt;
        return j ? { [NAME]: { '@type': PER_ROUTE, requirement_name: j.requirement } } : {};
      },
    };
  },
};

function provider(p: JwtProviderIR): Json {
  const out: Json = {};
  if (p.issuer) out.issuer = p.issuer;
  if (p.audiences.length) out.audiences = p.audiences;
  if ('inline' in p.jwks) out.local_jwks = { inline_string: p.jwks.inline };
  else {
    const r = p.jwks.remote;
    out.remote_jwks = {
      http_uri: { uri: r.uri, cluster: r.cluster.name, timeout: r.timeout },
      ...(r.cacheDuration ? { cache_duration: r.cacheDuration } : {}),
    };
  }
  if (p.forward) out.forward = true;
  if (p.claimToHeaders.length) {
    out.claim_to_headers = p.claimToHeaders.map((c) => ({ header_name: c.header, claim_name: c.claim }));
  }
  return out;
}
