// The Gateway API's cross-serving rule between HTTPRoutes and GRPCRoutes (v1.6.1 GRPCRouteSpec.hostnames, GEP-1016
// "Cross Serving"): "If a Route (A) of type HTTPRoute or GRPCRoute is attached to a Listener and that listener already
// has another Route (B) of the other type attached and the intersection of the hostnames of A and B is non-empty,
// then the implementation MUST accept exactly one of these two routes, determined by ... the oldest Route based on
// creation timestamp [then] the Route appearing first in alphabetical order by {namespace}/{name}. The rejected Route
// MUST raise an 'Accepted' condition with a status of 'False' in the corresponding RouteParentStatus." Per listener,
// routes are taken oldest first; one whose served hostnames overlap those of a route of the other kind already kept
// loses its place there; a parentRef left with no listener reads Accepted=False, reason HostnameConflict (the API
// defines no reason for it; Traefik's implementation of the rule uses this one), naming the route that won.
import { hostsOverlap } from './hostnames.ts';
import { bad, compareStrings, type ObjRef, type Outcome } from './types.ts';

const CROSS = new Set(['HTTPRoute', 'GRPCRoute']);

/** What the rule reads of a placement (attach-routes.ts Placement): listener, route, served hosts, parentRef report. */
interface CrossPlacement {
  s: { id: string; l: { name: string } };
  r: { ref: ObjRef; creationTimestamp: string };
  hosts: string[];
  parent?: { accepted: Outcome };
}

export function withoutCrossServing<P extends CrossPlacement>(placements: P[]): P[] {
  if (!placements.some((p) => p.r.ref.kind === 'GRPCRoute')) return placements;
  const older = (a: P, b: P) =>
    compareStrings(a.r.creationTimestamp, b.r.creationTimestamp) ||
    compareStrings(`${a.r.ref.namespace}/${a.r.ref.name}`, `${b.r.ref.namespace}/${b.r.ref.name}`);
  const lost = new Map<P, P>();
  const byListener = new Map<string, P[]>();
  for (const p of placements) {
    if (!CROSS.has(p.r.ref.kind)) continue;
    byListener.set(p.s.id, [...(byListener.get(p.s.id) ?? []), p]);
  }
  for (const list of byListener.values()) {
    const kept: P[] = [];
    for (const p of [...list].sort(older)) {
      const winner = kept.find((k) => k.r.ref.kind !== p.r.ref.kind && hostsOverlap(k.hosts, p.hosts));
      if (winner) lost.set(p, winner);
      else kept.push(p);
    }
  }
  if (!lost.size) return placements;
  const out = placements.filter((p) => !lost.has(p));
  for (const [p, winner] of lost) {
    if (!p.parent || out.some((q) => q.parent === p.parent)) continue;
    const w = winner.r.ref;
    p.parent.accepted = bad(
      'HostnameConflict',
      `listener ${p.s.l.name}: ${w.kind} ${w.namespace}/${w.name} serves the same hostnames (${winner.hosts.join(', ')}) and is older; an HTTPRoute and a GRPCRoute may not share a hostname on a listener (GRPCRoute cross serving)`,
    );
  }
  return out;
}
