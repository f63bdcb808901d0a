// Placed TCPRoutes and UDPRoutes → the Gateway's TCP and UDP listeners: one per usable listener port (two TCP
// listeners on one port conflict, listeners.ts), serving the oldest route attached there. Several routes may attach
// to one TCP or UDP listener and all are Accepted, but only the oldest (creationTimestamp, then namespace/name) is
// bound: the Gateway API's conflict rule, as upstream's conformance test TCPRouteMultipleRoutesAttachment expects.
// A UDPRoute with several resolved backends gets one cluster of them all, weighted per endpoint (udp_proxy has no
// weighted clusters; Envoy Gateway merges a UDPRoute's backends into one cluster the same way); an unresolved
// backend's share is then not refused, unlike TCP's. TLS listeners (TLSRoutes, by SNI): tls-listeners.ts.
import type { Placement } from './attach-routes.ts';
import { BLACKHOLE_CLUSTER } from './backend-refs.ts';
import type { L4RouteInfo } from './l4-routes.ts';
import type { ListenerState } from './listeners.ts';
import { buildTlsListeners } from './tls-listeners.ts';
import { type ClusterIR, compareStrings, type L4ListenerIR } from './types.ts';

export function buildL4Listeners(
  listeners: ListenerState[],
  placements: Placement<L4RouteInfo>[],
): { listeners: L4ListenerIR[]; clusters: ClusterIR[] } {
  const out: L4ListenerIR[] = [];
  const clusters = new Map<string, ClusterIR>();
  for (const s of listeners) {
    if (!s.usable || (s.l.protocol !== 'TCP' && s.l.protocol !== 'UDP')) continue;
    const protocol = s.l.protocol;
    const routes = placements
      .filter((p) => p.s === s && p.r.ref.kind !== 'TLSRoute')
      .map((p) => p.r)
      .sort(
        (a, b) =>
          compareStrings(a.creationTimestamp, b.creationTimestamp) ||
          compareStrings(`${a.ref.namespace}/${a.ref.name}`, `${b.ref.namespace}/${b.ref.name}`),
      );
    const r = routes[0];
    let backends = r ? r.backends.map((b) => ({ ...b })) : [];
    if (r) for (const c of r.clusters) if (r.backends.some((b) => b.cluster === c.name)) clusters.set(c.name, c);
    const live = backends.filter((b) => b.cluster !== BLACKHOLE_CLUSTER);
    if (r && protocol === 'UDP' && live.length > 1) {
      // Envoy's udp_proxy sends a session to one cluster: several Services become one weighted cluster.
      const c = weightedUdpCluster(r, live);
      clusters.set(c.name, c);
      backends = [{ cluster: c.name, weight: 1 }];
    }
    out.push({
      name: protocol === 'UDP' ? `listener~udp~${s.l.port}` : `listener~${s.l.port}`,
      protocol,
      port: s.l.port,
      gatewayListeners: [s.id],
      ...(r ? { route: { kind: r.ref.kind, namespace: r.ref.namespace, name: r.ref.name } } : {}),
      backends,
    });
  }
  const tls = buildTlsListeners(listeners, placements);
  out.push(...tls.listeners);
  for (const c of tls.clusters) clusters.set(c.name, c);
  out.sort((a, b) => a.port - b.port || compareStrings(a.protocol, b.protocol));
  return { listeners: out, clusters: [...clusters.values()] };
}

/** `udproute_<ns>_<name>`: the route's resolved Services as the weighted members of one cluster. */
function weightedUdpCluster(r: L4RouteInfo, live: { cluster: string; weight: number }[]): ClusterIR {
  const members = live.map((b) => {
    const c = r.clusters.find((x) => x.name === b.cluster)!;
    return { namespace: c.namespace, service: c.service, port: c.port, weight: b.weight };
  });
  return {
    name: `udproute_${r.ref.namespace}_${r.ref.name}`,
    namespace: r.ref.namespace,
    service: members[0].service,
    port: members[0].port,
    members,
  };
}
