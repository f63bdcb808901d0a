// Placed TLSRoutes → the Gateway's TLS listeners (GEP-2643; Gateway API v1.6.1 apis/v1/tlsroute_types.go): one
// Envoy listener per port holding every usable TLS Gateway listener there, with one filter chain per (TLSRoute,
// Gateway listener) matched by SNI: the route's hostnames intersected with the listener's ("requests are matched by
// SNI", GEP-2643). tls.mode Passthrough: the connection goes to the backends as it came (the TLS stays end to end);
// Terminate: the proxy terminates TLS with the listener's certificates, then plaintext to the backends. A name two
// routes claim goes to the oldest (creationTimestamp, then namespace/name: the Gateway API's conflict rule), so each
// SNI name is in one chain only (Envoy refuses two chains with the same match). A route whose backends do not resolve
// keeps its chain with no backend: its connections are closed ("MUST actively reject connection attempts").
import type { Placement } from './attach-routes.ts';
import type { L4RouteInfo } from './l4-routes.ts';
import { type ListenerState, tlsMode } from './listeners.ts';
import { type ClusterIR, compareStrings, type L4ChainIR, type L4ListenerIR } from './types.ts';

const byAge = (a: L4RouteInfo, b: L4RouteInfo) =>
  compareStrings(a.creationTimestamp, b.creationTimestamp) ||
  compareStrings(`${a.ref.namespace}/${a.ref.name}`, `${b.ref.namespace}/${b.ref.name}`);

export function buildTlsListeners(
  listeners: ListenerState[],
  placements: Placement<L4RouteInfo>[],
): { listeners: L4ListenerIR[]; clusters: ClusterIR[] } {
  const byPort = new Map<number, ListenerState[]>();
  for (const s of listeners) {
    if (!s.usable || s.l.protocol !== 'TLS') continue;
    byPort.set(s.l.port, [...(byPort.get(s.l.port) ?? []), s]);
  }
  const out: L4ListenerIR[] = [];
  const clusters = new Map<string, ClusterIR>();
  for (const [port, states] of byPort) {
    const placed = placements
      .filter((p) => states.includes(p.s) && p.r.ref.kind === 'TLSRoute')
      .sort((a, b) => byAge(a.r, b.r) || states.indexOf(a.s) - states.indexOf(b.s));
    const taken = new Set<string>();
    const chains: L4ChainIR[] = [];
    for (const p of placed) {
      // `*`: the listener and the route leave the name open: the chain without server_names.
      const names = (p.hosts.includes('*') ? [''] : p.hosts.map((h) => h.toLowerCase())).filter((n) => !taken.has(n));
      if (!names.length) continue;
      for (const n of names) taken.add(n);
      for (const c of p.r.clusters) if (p.r.backends.some((b) => b.cluster === c.name)) clusters.set(c.name, c);
      const terminate = tlsMode(p.s.l) === 'Terminate';
      chains.push({
        name: `${p.s.id}/${p.r.ref.namespace}/${p.r.ref.name}`,
        listener: p.s.id,
        route: { kind: p.r.ref.kind, namespace: p.r.ref.namespace, name: p.r.ref.name },
        serverNames: names.filter(Boolean).sort(compareStrings),
        backends: p.r.backends.map((b) => ({ ...b })),
        ...(terminate && p.s.certificates ? { certificates: p.s.certificates } : {}),
      });
    }
    chains.sort((a, b) => compareStrings(a.name, b.name));
    out.push({
      name: `listener~${port}`,
      protocol: 'TLS',
      port,
      gatewayListeners: states.map((s) => s.id),
      backends: [],
      chains,
    });
  }
  return { listeners: out, clusters: [...clusters.values()] };
}
