// One TCPRoute, UDPRoute or TLSRoute (v1, Gateway API v1.6.1: apis/v1/{tcproute,udproute,tlsroute}_types.go),
// resolved on its own (a TLSRoute's hostnames are the SNI names it serves, intersected with listeners' hostnames at
// attachment): its single rule's weighted backendRefs against Services and ReferenceGrants (the one resolver HTTPRoutes use,
// backend-refs.ts). "If unspecified or invalid, the underlying implementation MUST actively reject connection attempts to
// this backend ... respect weight": an unresolved backend's share goes to `blackhole-cluster`, which is never
// defined, so the proxy closes those connections (Envoy's tcp_proxy with an unknown cluster does the same).
import { GATEWAY_GROUP, type L4Route } from '../model.ts';
import type { AttachableRoute } from './attach-routes.ts';
import { BLACKHOLE_CLUSTER, type RouteWorld, resolveServiceRef } from './backend-refs.ts';
import { normalizeParentRef } from './routes.ts';
import { type ClusterIR, compareStrings, type ObjRef, type Outcome, type WeightedClusterIR } from './types.ts';

export type L4Kind = 'TCPRoute' | 'UDPRoute' | 'TLSRoute';

export interface L4RouteInfo extends AttachableRoute {
  ref: ObjRef & { kind: L4Kind };
  /** Weighted clusters of the rule (an unresolved backend's weight on blackhole-cluster); empty: reject every connection. */
  backends: WeightedClusterIR[];
  clusters: ClusterIR[];
}

export function buildL4RouteInfo(kind: L4Kind, route: L4Route, world: RouteWorld): L4RouteInfo {
  const ns = route.metadata.namespace ?? 'default';
  const from = { group: GATEWAY_GROUP, kind, namespace: ns };
  const errors: { reason: string; message: string }[] = [];
  const clusters = new Map<string, ClusterIR>();
  const backends: WeightedClusterIR[] = [];
  const add = (cluster: string, weight: number) => {
    const same = backends.find((b) => b.cluster === cluster);
    if (same) same.weight += weight;
    else backends.push({ cluster, weight });
  };
  (route.spec?.rules?.[0]?.backendRefs ?? []).forEach((b, bi) => {
    const res = resolveServiceRef(world, from, b, `spec.rules[0].backendRefs[${bi}]`);
    const weight = b.weight ?? 1;
    if (res.error) errors.push(res.error);
    if (weight === 0) return;
    if (res.cluster) {
      clusters.set(res.cluster.name, res.cluster);
      add(res.cluster.name, weight);
    } else add(BLACKHOLE_CLUSTER, weight);
  });
  const resolvedRefs: Outcome = errors.length
    ? { ok: false, reason: errors[0].reason, message: errors.map((e) => e.message).join('; ') }
    : { ok: true, reason: 'ResolvedRefs', message: 'all references resolved' };
  return {
    ref: { kind, namespace: ns, name: route.metadata.name },
    generation: route.metadata.generation ?? 1,
    creationTimestamp: route.metadata.creationTimestamp ?? '',
    hostnames: kind === 'TLSRoute' ? (route.spec?.hostnames ?? []) : [],
    parentRefs: (route.spec?.parentRefs ?? []).map((p) => normalizeParentRef(ns, p)),
    ruleCount: 1,
    droppedRules: [],
    resolvedRefs,
    backends: backends.some((b) => b.cluster !== BLACKHOLE_CLUSTER) ? backends : [],
    clusters: [...clusters.values()].sort((a, b) => compareStrings(a.name, b.name)),
  };
}
