// Placed HTTPRoutes → the Gateway's HTTP and HTTPS Envoy listeners: one per port (its Gateway listeners merged; HTTPS
// ones each a TLS filter chain, all sharing the port's route configuration), a virtual host per hostname (exact names
// first, then wildcards by length, then `*`), each with the route entries of the most specific Gateway listener
// matching it (listener isolation) in the spec's precedence order and the TrafficPolicies merged per entry
// (attach-policies.ts). Also what those entries use: their clusters and ext auth filters, and the findings of the
// routes and policies that reach them.
import type { GatewayPolicies } from './attach-policies.ts';
import type { Placement } from './attach-routes.ts';
import { mostSpecificListenerHost, virtualHostName } from './hostnames.ts';
import type { ListenerState } from './listeners.ts';
import type { PolicyInfo } from './policies.ts';
import type { RouteInfo } from './routes.ts';
import {
  type ClusterIR,
  compareStrings,
  type ExtAuthIR,
  type Finding,
  type ListenerIR,
  type MatchIR,
  type RouteEntryIR,
  type RouteIR,
  type TlsChainIR,
  type VirtualHostIR,
} from './types.ts';

export interface VirtualHostsResult {
  listeners: ListenerIR[];
  /** Every cluster a route entry or ext auth filter uses, by name. */
  clusters: ClusterIR[];
  /** Every ext auth filter a route entry turns on, by filter name. */
  extAuth: ExtAuthIR[];
  /** Route findings (in placement order), then policy findings (in route order), each once. */
  findings: Finding[];
}

interface PlacedEntry {
  e: RouteEntryIR;
  r: RouteInfo;
  listener: string;
}

/** Per port: the usable Gateway listeners on it, and per hostname the route entries placed there. */
type Ports = Map<
  number,
  { names: string[]; listenerHosts: (string | undefined)[]; hosts: Map<string, PlacedEntry[]>; tls?: TlsChainIR[] }
>;

export function buildVirtualHosts(
  listeners: ListenerState[],
  placements: Placement[],
  policies: GatewayPolicies<PolicyInfo>,
): VirtualHostsResult {
  const findings = new Findings();
  const ports = groupByPortAndHost(listeners, placements, findings);
  const routeClusters = new Map<string, ClusterIR>();
  for (const pl of placements) {
    // A Service port a GRPCRoute uses is reached over HTTP/2, by its HTTPRoutes too (a port speaks one protocol).
    for (const c of pl.r.clusters) if (!routeClusters.get(c.name)?.protocol) routeClusters.set(c.name, c);
  }
  const clusters = new Map<string, ClusterIR>();
  const extAuth = new Map<string, ExtAuthIR>();

  const out: ListenerIR[] = [];
  for (const [port, p] of [...ports].sort((a, b) => a[0] - b[0])) {
    const virtualHosts: VirtualHostIR[] = [];
    for (const [host, list] of [...p.hosts].sort((a, b) => hostOrder(a[0], b[0]))) {
      const routes = inPrecedenceOrder(list).map((x) => {
        const route = withPolicies(x, policies, findings);
        addClustersOf(route, routeClusters, clusters);
        const ea = route.policy.extAuth;
        if (ea && !ea.disabled) {
          extAuth.set(ea.ext.filterName, ea.ext);
          clusters.set(ea.ext.cluster.name, ea.ext.cluster);
        }
        const rl = route.policy.rateLimit?.global;
        if (rl) clusters.set(rl.ext.cluster.name, rl.ext.cluster);
        const ep = route.policy.extProc;
        if (ep && !ep.disabled) clusters.set(ep.ext.cluster.name, ep.ext.cluster);
        for (const pr of route.policy.jwt?.providers ?? []) {
          if ('remote' in pr.jwks) clusters.set(pr.jwks.remote.cluster.name, pr.jwks.remote.cluster);
        }
        return route;
      });
      virtualHosts.push({ name: virtualHostName(port, host), domains: [host], routes });
    }
    const name = `listener~${port}`;
    const tls = p.tls && {
      tls: chainRoutes(name, p.tls, p.listenerHosts, virtualHosts).sort(
        (a, b) => Number(!a.serverNames.length) - Number(!b.serverNames.length),
      ),
    };
    out.push({ name, port, gatewayListeners: p.names, virtualHosts, ...tls });
  }
  return {
    listeners: out,
    clusters: [...clusters.values()].sort((a, b) => compareStrings(a.name, b.name)),
    extAuth: [...extAuth.values()].sort((a, b) => compareStrings(a.filterName, b.filterName)),
    findings: findings.list,
  };
}

function groupByPortAndHost(listeners: ListenerState[], placements: Placement[], findings: Findings): Ports {
  const ports: Ports = new Map();
  for (const s of listeners) {
    if (!s.usable || (s.l.protocol !== 'HTTP' && s.l.protocol !== 'HTTPS')) continue;
    let p = ports.get(s.l.port);
    if (!p) {
      p = { names: [], listenerHosts: [], hosts: new Map() };
      ports.set(s.l.port, p);
    }
    p.names.push(s.id);
    p.listenerHosts.push(s.l.hostname || undefined);
    // HTTPS listeners share a port with HTTPS listeners only (listeners.ts: ProtocolConflict), with distinct hostnames.
    if (s.l.protocol === 'HTTPS') {
      p.tls ??= [];
      p.tls.push({
        listener: s.id,
        serverNames: s.l.hostname ? [s.l.hostname] : [],
        certificates: s.certificates ?? [],
        ...(s.clientValidation ? { clientValidation: s.clientValidation } : {}),
      });
    }
  }
  for (const pl of placements) {
    // Routes also attach to listeners that are not served (unresolved references): no virtual host.
    if (!pl.s.usable) continue;
    const port = ports.get(pl.s.l.port)!;
    findings.add(pl.r.findings);
    for (const h of pl.hosts) {
      // Listener isolation: a host served by a more specific listener on the port gets none of this one's routes.
      if (mostSpecificListenerHost(port.listenerHosts, h) !== (pl.s.l.hostname || undefined)) continue;
      let list = port.hosts.get(h);
      if (!list) {
        list = [];
        port.hosts.set(h, list);
      }
      for (const e of pl.r.entries) list.push({ e, r: pl.r, listener: pl.s.id });
    }
  }
  return ports;
}

/**
 * Each HTTPS listener's chain gets its own route configuration (`<port listener>~<Gateway listener>`): the virtual
 * hosts its listener owns (the most specific listener hostname covering their domain, as listener isolation places
 * routes), and 421 for the hostnames of the port's other listeners, and for any other host when it has a hostname of
 * its own: the SNI chose this listener's certificate, the Host belongs elsewhere (RFC 9110 15.5.20 Misdirected Request;
 * Gateway API HTTPRouteHTTPSListenerDetectMisdirectedRequests).
 */
function chainRoutes(
  port: string,
  chains: TlsChainIR[],
  listenerHosts: (string | undefined)[],
  vhosts: VirtualHostIR[],
): TlsChainIR[] {
  return chains.map((c) => {
    const own = c.serverNames[0];
    const others = chains.flatMap((o) => (o === c ? [] : o.serverNames));
    return {
      ...c,
      routeConfig: `${port}~${c.listener}`,
      virtualHosts: vhosts
        .filter((v) => mostSpecificListenerHost(listenerHosts, v.domains[0]) === own)
        .map((v) => v.name),
      misdirected: [...others.sort(hostOrder), ...(own ? ['*'] : [])],
    };
  });
}

/** The entries of one virtual host in precedence order, each once (a route attached through two listeners). */
function inPrecedenceOrder(list: PlacedEntry[]): PlacedEntry[] {
  if (list.length < 2) return list;
  // An entry placed twice is the same object (its RouteInfo's), so identity finds it without hashing names.
  const seen = new Set<RouteEntryIR>();
  return list.sort(comparePrecedence).filter((x) => {
    if (seen.has(x.e)) return false;
    seen.add(x.e);
    return true;
  });
}

/** The entry with the settings of the policies that reach it merged, and where each came from. */
function withPolicies({ e, r, listener }: PlacedEntry, policies: GatewayPolicies<PolicyInfo>, findings: Findings) {
  const { merged, candidates } = policies.mergeAt(listener, attachPointOf(r), e.ruleName || undefined);
  for (const c of candidates) findings.add(c.policy.findings);
  // Where several policies set a field, the decision itself (winner, the others and the rule): translate prints it.
  const contested = merged.fields.length ? merged.fields.filter((f) => f.over.length || f.mergeRefused) : merged.fields;
  const out: RouteIR = {
    ...e,
    policy: merged.settings,
    provenance: merged.provenance,
    ...(contested.length ? { precedence: contested } : {}),
  };
  return out;
}

type RouteAttachPoint = { kind: string; namespace: string; name: string; labels: Record<string, string> };
const attachPoints = new WeakMap<RouteInfo, RouteAttachPoint>();

/** The route as policy attachment sees it, one object per RouteInfo (GatewayPolicies caches its candidates by it). */
function attachPointOf(r: RouteInfo): RouteAttachPoint {
  let at = attachPoints.get(r);
  if (!at) {
    at = { kind: r.ref.kind, namespace: r.ref.namespace, name: r.ref.name, labels: r.labels };
    attachPoints.set(r, at);
  }
  return at;
}

/** Adds the backend and mirror clusters a route entry sends to (without building lists: this runs per entry). */
function addClustersOf(r: RouteIR, routeClusters: Map<string, ClusterIR>, into: Map<string, ClusterIR>): void {
  const add = (name: string) => {
    const c = routeClusters.get(name);
    if (c) into.set(c.name, c);
  };
  if (r.action.type === 'forward') for (const b of r.action.backends) add(b.cluster);
  for (const m of r.mirrors) add(m.cluster);
}

/**
 * Spec precedence within a virtual host. HTTPRoute ("matches"): Exact > RegularExpression > PathPrefix, longer paths
 * first, then method, more headers, more query params. GRPCRoute (GRPCRouteRule "matches"): more characters in the
 * service, then in the method, then more header matches. Then, for both, the older route, namespace/name, rule and
 * match order. The two kinds are not merged ("Merging MUST not be done between GRPCRoutes and HTTPRoutes"): where both
 * share a hostname, GRPCRoute entries with a method match (which only gRPC paths `/<service>/<method>` meet) come
 * first, then the HTTPRoute entries, then GRPCRoute entries matching every method.
 */
function comparePrecedence(a: PlacedEntry, b: PlacedEntry): number {
  const group = (x: PlacedEntry) => (!x.e.grpc ? 1 : x.e.matchIR.grpc ? 0 : 2);
  const byKind = group(a) - group(b);
  if (byKind) return byKind;
  const ma = a.e.matchIR;
  const mb = b.e.matchIR;
  return (
    (a.e.grpc ? compareGrpcMatches(ma, mb) : compareHttpMatches(ma, mb)) ||
    compareStrings(a.r.creationTimestamp, b.r.creationTimestamp) ||
    compareStrings(`${a.r.ref.namespace}/${a.r.ref.name}`, `${b.r.ref.namespace}/${b.r.ref.name}`) ||
    a.e.rule - b.e.rule ||
    a.e.match - b.e.match
  );
}

function compareHttpMatches(ma: MatchIR, mb: MatchIR): number {
  const rank = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;
  return (
    rank[ma.path.type] - rank[mb.path.type] ||
    mb.path.value.length - ma.path.value.length ||
    Number(!!mb.method) - Number(!!ma.method) ||
    mb.headers.length - ma.headers.length ||
    mb.queryParams.length - ma.queryParams.length
  );
}

function compareGrpcMatches(ma: MatchIR, mb: MatchIR): number {
  return (
    (mb.grpc?.service?.length ?? 0) - (ma.grpc?.service?.length ?? 0) ||
    (mb.grpc?.method?.length ?? 0) - (ma.grpc?.method?.length ?? 0) ||
    mb.headers.length - ma.headers.length
  );
}

/** Exact hostnames first (alphabetical), then wildcards by decreasing length, then `*`. */
function hostOrder(a: string, b: string): number {
  const wa = a === '*' ? 2 : a.startsWith('*.') ? 1 : 0;
  const wb = b === '*' ? 2 : b.startsWith('*.') ? 1 : 0;
  if (wa !== wb) return wa - wb;
  if (wa === 1 && a.length !== b.length) return b.length - a.length;
  return compareStrings(a, b);
}

/** Findings in the order first seen, each (resource, field) once. */
class Findings {
  readonly list: Finding[] = [];
  private readonly seen = new Set<string>();
  add(fs: Finding[]): void {
    for (const f of fs) {
      const k = `${f.resource.kind}/${f.resource.namespace}/${f.resource.name}/${f.field}`;
      if (!this.seen.has(k)) {
        this.seen.add(k);
        this.list.push(f);
      }
    }
  }
}
