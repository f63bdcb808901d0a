// One GRPCRoute (v1, Gateway API v1.6.1 apis/v1/grpcroute_types.go; GEP-1016), resolved on its own into the same
// RouteInfo an HTTPRoute becomes, so attachment, virtual hosts and the xDS translation treat both alike. As Envoy
// Gateway translates it (internal/gatewayapi/route.go, processGRPCRouteRule), a gRPC request is an HTTP/2 POST to
// `/<service>/<method>`, so a method match is a path match:
//   Exact, service and method   → path `/<service>/<method>` (exact)
//   Exact, service only         → prefix `/<service>/`
//   Exact, method only          → safe_regex `/<any valid service>/<method>`
//   RegularExpression           → safe_regex `/<service or any valid service>/<method or any valid method>`
//   no method match             → every request (prefix `/`)
// (Envoy Gateway writes the service-only prefix without its trailing slash and the method-only Exact match as a
// `:path` suffix header match; the slash keeps `/<service>Other/...` out, and the regex matches what the suffix does
// for a well-formed gRPC path.) Header matches as HTTPRoute's (the first of equivalent names only, as the API asks);
// filters RequestHeaderModifier, ResponseHeaderModifier, RequestMirror and ExtensionRef (a 500, as for HTTPRoute);
// header modifiers on a backendRef (GRPCBackendRef.filters) as HTTPRoute's; weighted backendRefs whose clusters speak
// HTTP/2 (h2c). A rule with no valid backend answers 503, which the proxy's local reply turns into gRPC UNAVAILABLE as
// GRPCRouteRule.backendRefs asks; an unresolved backend's share goes to
// `blackhole-cluster` (Envoy's cluster_not_found_response_code default, 503: UNAVAILABLE too). A method match with
// neither service nor method, or a regex RE2 refuses, makes the rule invalid (the CRD's CEL rules refuse the former
// at admission; EG answers both with Accepted=False UnsupportedValue).
import { re2Error } from '../../shared/regex.ts';
import { GATEWAY_GROUP, type GRPCRoute, type GRPCRouteMatch } from '../model.ts';
import { forwardAction, type RouteWorld } from './backend-refs.ts';
import { backendFilterProblems, type RouteInfo, RouteRules, ruleFilters } from './routes.ts';
import type { MatchIR, ObjRef, ValidationMode } from './types.ts';

/** GRPCRouteFilter.type's enum (v1.6.1). */
const GRPC_FILTERS: ReadonlySet<string> = new Set([
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestMirror',
  'ExtensionRef',
]);

/** What a service or method name may be (the CRD's CEL rules for Exact; Envoy Gateway's validServiceName/MethodName). */
export const VALID_SERVICE = '(?i:\\.?[a-z_][a-z_0-9]*(?:\\.[a-z_][a-z_0-9]*)*)';
export const VALID_METHOD = '[A-Za-z_][A-Za-z_0-9]*';

/** A GRPCRoute match → the path (and headers) a gRPC request must have; problems go to `problems`. */
export function grpcMatch(m: GRPCRouteMatch, field: string, problems: { field: string; message: string }[]): MatchIR {
  const seen = new Set<string>();
  const headers = (m.headers ?? [])
    .filter((h) => {
      const k = h.name.toLowerCase();
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .map((h) => ({ type: h.type ?? 'Exact', name: h.name, value: h.value }));
  headers.forEach((h, i) => {
    const err = h.type === 'RegularExpression' ? re2Error(h.value) : undefined;
    if (err) {
      problems.push({
        field: `${field}.headers[${i}].value`,
        message: `invalid RE2 regex ${JSON.stringify(h.value)}: ${err}`,
      });
    }
  });
  const base = { headers, queryParams: [] };
  const mm = m.method;
  if (!mm) return { path: { type: 'PathPrefix', value: '/' }, ...base };
  const type = mm.type ?? 'Exact';
  const grpc = { type, ...(mm.service ? { service: mm.service } : {}), ...(mm.method ? { method: mm.method } : {}) };
  if (!mm.service && !mm.method) {
    problems.push({ field: `${field}.method`, message: "one or both of 'service' or 'method' must be specified" });
    return { path: { type: 'PathPrefix', value: '/' }, ...base, grpc };
  }
  let path: MatchIR['path'];
  if (type === 'Exact' && mm.service && mm.method) path = { type: 'Exact', value: `/${mm.service}/${mm.method}` };
  else if (type === 'Exact' && mm.service) path = { type: 'PathPrefix', value: `/${mm.service}/` };
  else {
    const svc = type === 'Exact' || !mm.service ? VALID_SERVICE : mm.service;
    const method = !mm.method ? VALID_METHOD : type === 'Exact' ? escapeMethod(mm.method) : mm.method;
    path = { type: 'RegularExpression', value: `/${svc}/${method}` };
    const err = re2Error(path.value);
    if (err) {
      problems.push({
        field: `${field}.method`,
        message: `invalid RE2 regex ${JSON.stringify(path.value)} (service ${JSON.stringify(mm.service ?? '')}, method ${JSON.stringify(mm.method ?? '')}): ${err}`,
      });
    }
  }
  return { path, ...base, grpc };
}

/** An Exact method name in a regex: letters, digits and `_` only (the CRD's rule), so nothing to escape but a guard. */
function escapeMethod(m: string): string {
  return m.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

export function buildGrpcRouteInfo(route: GRPCRoute, world: RouteWorld, mode: ValidationMode): RouteInfo {
  const ns = route.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'GRPCRoute', namespace: ns, name: route.metadata.name };
  const from = { group: GATEWAY_GROUP, kind: 'GRPCRoute', namespace: ns };
  // "If no matches are specified, the implementation MUST match every gRPC request"; no rules: one such rule.
  const rules = route.spec?.rules?.length ? route.spec.rules : [{}];
  const built = new RouteRules(world, ref, mode);

  rules.forEach((rule, ri) => {
    const rf = `spec.rules[${ri}]`;
    const problems: { field: string; message: string }[] = [];
    const matches = (rule.matches?.length ? rule.matches : [{}]).map((m, mi) =>
      grpcMatch(m, `${rf}.matches[${mi}]`, problems),
    );
    const filters = ruleFilters(rule, rf, built.resolve, GRPC_FILTERS);
    // GRPCBackendRef.filters: the header modifiers apply to that backend's requests (forwardAction), as HTTPRoute's.
    backendFilterProblems(rule, rf, problems);
    if (built.dropsRule(ri, problems, filters)) return;
    const action =
      built.filterFailure(filters) ?? forwardAction(world, from, rule, rf, built.refErrors, built.clusters, 503);
    const { requestHeaders, responseHeaders, mirrors } = filters;
    built.addEntries(route, ri, matches, action, {
      ...(requestHeaders ? { requestHeaders } : {}),
      ...(responseHeaders ? { responseHeaders } : {}),
      mirrors,
      grpc: true,
    });
  });

  // gRPC is HTTP/2: its backends (and mirrors) are reached over h2c.
  const h2 = [...built.clusters.values()].map((c) => ({ ...c, protocol: 'http2' as const }));
  return built.info(route, rules.length, h2);
}
