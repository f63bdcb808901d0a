// TrafficPolicy `extAuth` → envoy.filters.http.ext_authz: one filter per GatewayExtension the listener's routes use
// (`envoy.filters.http.ext_authz/<ns>/<name>`), and on every route of that listener ExtAuthzPerRoute{disabled: true}
// for each of those filters the route's policy does not ask for. An HTTP service is `http_service`; a gRPC one is
// `grpc_service.envoy_grpc` on the Service's cluster with `transport_api_version: V3`, as Envoy Gateway and kgateway
// write it.
import { lookupEnum } from '../../../shared/envoy/protos.ts';
import type { ExtAuthIR, GatewayIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const EXT_AUTHZ = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const EXT_AUTHZ_PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute';

export const extAuthzFilter = {
  forListener(routes: readonly RouteIR[], ir: GatewayIR) {
    const names = extAuthFilterNames(routes);
    return {
      chain: ir.extAuth.filter((e) => names.has(e.filterName)).map(extAuthFilter),
      perRoute(r: RouteIR): Json {
        // Each ext_authz filter of the listener runs only on the routes whose policy asks for it: the others turn it off.
        const p = r.policy;
        const mine = p.extAuth && !p.extAuth.disabled ? p.extAuth.ext.filterName : undefined;
        const out: Json = {};
        for (const f of names) if (f !== mine) out[f] = { '@type': EXT_AUTHZ_PER_ROUTE, disabled: true };
        return out;
      },
    };
  },
};

/** The ext_authz filters a listener has (one per GatewayExtension its routes use). */
function extAuthFilterNames(routes: readonly RouteIR[]): Set<string> {
  const names = new Set<string>();
  for (const r of routes)
    if (r.policy.extAuth && !r.policy.extAuth.disabled) names.add(r.policy.extAuth.ext.filterName);
  return names;
}

let statusNames: Record<number, string> | undefined;
/** envoy.type.v3.StatusCode by number (the enum is named after the reason phrases, e.g. 403 → "Forbidden"). */
function statusCodeName(code: number): string | number {
  statusNames ??= lookupEnum('envoy.type.v3.StatusCode').valuesById as Record<number, string>;
  return statusNames[code] ?? code;
}

function extAuthFilter(e: ExtAuthIR): Json {
  const cfg: Json = e.grpc
    ? {
        '@type': EXT_AUTHZ,
        grpc_service: {
          envoy_grpc: { cluster_name: e.cluster.name, ...(e.grpc.authority ? { authority: e.grpc.authority } : {}) },
          timeout: e.timeout,
        },
        transport_api_version: 'V3',
      }
    : {
        '@type': EXT_AUTHZ,
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
