// Routes (HTTPRoute, TCPRoute, UDPRoute) → a Gateway's listeners, as the Gateway API's "attaching routes to Gateways"
// asks: for each parentRef that names the Gateway (its own listeners) or a ListenerSet attached to it (that set's
// listeners, GEP-1713), its sectionName and port pick candidate listeners, their allowedRoutes (namespaces, kinds)
// admit the route or not, and the hostname intersection decides the hostnames it is served under. Each such parentRef
// gets the report its status entry is made from; each admitted (listener, route) pair is a placement.
import { GATEWAY_GROUP, type Gateway, matchesLabels, type Namespace, type ParentRef } from '../model.ts';
import { withoutCrossServing } from './cross-serving.ts';
import { intersectHostnames } from './hostnames.ts';
import { type ListenerState, routeKindsOf } from './listeners.ts';
import type { NormalizedParentRef, RouteInfo } from './routes.ts';
import { bad, compareStrings, type ObjRef, type Outcome, ok } from './types.ts';

/** What attachment reads of a route, whatever its kind. */
export interface AttachableRoute {
  ref: ObjRef;
  generation: number;
  creationTimestamp: string;
  hostnames: string[];
  parentRefs: NormalizedParentRef[];
  ruleCount: number;
  droppedRules: { rule: number; message: string }[];
  resolvedRefs: Outcome;
}

export interface RouteParentReport {
  parentRef: ParentRef;
  accepted: Outcome;
  resolvedRefs: Outcome;
  partiallyInvalid?: Outcome;
}

/** A route served on one listener, under the hostnames both allow. */
export interface Placement<R extends AttachableRoute = RouteInfo> {
  s: ListenerState;
  r: R;
  hosts: string[];
  /** The report of the parentRef that placed it. */
  parent?: RouteParentReport;
}

export interface RouteAttachment<R extends AttachableRoute> {
  /** In route order (namespace/name), then parentRef and listener order. */
  placements: Placement<R>[];
  /** route key → one entry per parentRef that names this Gateway */
  reports: Record<string, { generation: number; parents: RouteParentReport[] }>;
}

/** The key a route's reports go under: `<ns>/<name>` for an HTTPRoute, `<Kind>/<ns>/<name>` for the other kinds. */
export function routeReportKey(r: { ref: ObjRef }): string {
  const k = `${r.ref.namespace}/${r.ref.name}`;
  return r.ref.kind === 'HTTPRoute' ? k : `${r.ref.kind}/${k}`;
}

/**
 * Places `routes` (those whose parentRefs name the Gateway or its ListenerSets) on its listeners and counts each
 * listener's attached routes; reports are keyed by `reportKey` (routeReportKey). With the Gateway not accepted, every
 * parentRef reads NoMatchingParent and nothing is placed.
 */
export function attachRoutes<R extends AttachableRoute>(
  gw: Gateway,
  gatewayAccepted: Outcome,
  listeners: ListenerState[],
  routes: R[],
  namespace: (name: string) => Namespace | undefined,
  reportKey: (r: R) => string = routeReportKey,
): RouteAttachment<R> {
  const out: RouteAttachment<R> = { placements: [], reports: {} };
  const sorted = [...routes].sort((a, b) =>
    compareStrings(`${a.ref.namespace}/${a.ref.name}`, `${b.ref.namespace}/${b.ref.name}`),
  );
  for (const r of sorted) {
    const parents: RouteParentReport[] = [];
    const attachedTo = new Set<string>();
    for (const p of r.parentRefs) {
      const mine = listeners.filter((s) => ownerMatches(p, s));
      if (!mine.length && !parentMatchesGateway(p, gw)) continue;
      const { report, matching } = attachParentRef(gw, gatewayAccepted, mine, r, p, namespace);
      parents.push(report);
      for (const m of matching) {
        if (attachedTo.has(m.s.id)) continue;
        attachedTo.add(m.s.id);
        out.placements.push({ s: m.s, r, hosts: m.hosts, parent: report });
      }
    }
    if (parents.length) out.reports[reportKey(r)] = { generation: r.generation, parents };
  }
  out.placements = withoutCrossServing(out.placements);
  for (const pl of out.placements) pl.s.report.attachedRoutes++;
  return out;
}

/** One parentRef of the route that names the Gateway: its report, and the listeners (with hostnames) it admits. */
function attachParentRef(
  gw: Gateway,
  gatewayAccepted: Outcome,
  listeners: ListenerState[],
  r: AttachableRoute,
  p: NormalizedParentRef,
  namespace: (name: string) => Namespace | undefined,
): { report: RouteParentReport; matching: { s: ListenerState; hosts: string[] }[] } {
  const key = `${p.kind} ${p.namespace}/${p.name}`;
  const report: RouteParentReport = {
    parentRef: p.original,
    accepted: ok('Accepted', 'route accepted'),
    resolvedRefs: r.resolvedRefs,
  };
  const refuse = (reason: string, message: string) => {
    report.accepted = bad(reason, message);
    return { report, matching: [] };
  };
  if (!gatewayAccepted.ok)
    return refuse(
      'NoMatchingParent',
      `Gateway ${gw.metadata.namespace ?? 'default'}/${gw.metadata.name} is not accepted: ${gatewayAccepted.message}`,
    );
  const candidates = listeners.filter(
    (s) => (p.sectionName === undefined || s.l.name === p.sectionName) && (p.port === undefined || s.l.port === p.port),
  );
  if (!candidates.length) {
    const what = [
      p.sectionName !== undefined ? `sectionName ${p.sectionName}` : '',
      p.port !== undefined ? `port ${p.port}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    return refuse('NoMatchingParent', `${key} has no listener with ${what}`);
  }
  const allowed = candidates.filter(
    (s) =>
      s.attachable &&
      s.report.supportedKinds.some((k) => k.kind === r.ref.kind) &&
      namespaceAllowed(s, r.ref.namespace, namespace),
  );
  if (!allowed.length) {
    return refuse(
      'NotAllowedByListeners',
      `no listener of ${key} admits it: ${candidates.map((s) => `${s.l.name} ${whyNotAllowed(s, r)}`).join('; ')}`,
    );
  }
  const matching = allowed
    .map((s) => ({ s, hosts: intersectHostnames(s.l.hostname, r.hostnames) }))
    .filter((x) => x.hosts.length);
  if (!matching.length) {
    return refuse(
      'NoMatchingListenerHostname',
      `no hostname of the route (${r.hostnames.join(', ')}) matches a listener hostname (${allowed.map((s) => s.l.hostname ?? '(any)').join(', ')})`,
    );
  }
  if (r.ruleCount > 0 && r.droppedRules.length === r.ruleCount) {
    return refuse('UnsupportedValue', `every rule is invalid: ${r.droppedRules.map((d) => d.message).join('; ')}`);
  }
  if (r.droppedRules.length) {
    // "The message for this condition MUST start with the prefix "Dropped Rule"" (apis/v1/shared_types.go,
    // RouteConditionPartiallyInvalid).
    report.partiallyInvalid = bad(
      'UnsupportedValue',
      `Dropped Rule${r.droppedRules.length > 1 ? 's' : ''}: ${r.droppedRules.map((d) => `spec.rules[${d.rule}]: ${d.message}`).join('; ')}`,
    );
  }
  return { report, matching };
}

/** Why a candidate listener does not admit the route: its own state first, then its kinds, then allowedRoutes. */
function whyNotAllowed(s: ListenerState, r: AttachableRoute): string {
  if (!s.report.accepted.ok) return `is not accepted (${s.report.accepted.message})`;
  if (!s.report.conflicted.ok) return `is in conflict (${s.report.conflicted.message})`;
  if (!s.kindsOk) return `does not admit ${r.ref.kind} (allowedRoutes.kinds)`;
  if (!s.report.supportedKinds.some((k) => k.kind === r.ref.kind)) {
    if (routeKindsOf(s.l.protocol).includes(r.ref.kind)) return `does not admit ${r.ref.kind} (allowedRoutes.kinds)`;
    return `does not admit ${r.ref.kind} (protocol ${s.l.protocol} carries ${s.report.supportedKinds.map((k) => k.kind).join(', ')})`;
  }
  return `does not allow routes from namespace ${r.ref.namespace} (allowedRoutes.namespaces)`;
}

function parentMatchesGateway(p: NormalizedParentRef, gw: Gateway): boolean {
  return (
    p.group === GATEWAY_GROUP &&
    p.kind === 'Gateway' &&
    p.namespace === (gw.metadata.namespace ?? 'default') &&
    p.name === gw.metadata.name
  );
}

/** A parentRef of kind Gateway reaches the Gateway's own listeners; one of kind ListenerSet, that set's. */
function ownerMatches(p: NormalizedParentRef, s: ListenerState): boolean {
  return (
    p.group === GATEWAY_GROUP && p.kind === s.owner.kind && p.namespace === s.owner.namespace && p.name === s.owner.name
  );
}

/** allowedRoutes.namespaces: Same (default: the namespace of the Gateway or ListenerSet), All, or a Selector. */
function namespaceAllowed(
  s: ListenerState,
  routeNs: string,
  namespace: (name: string) => Namespace | undefined,
): boolean {
  const l = s.l;
  const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'All') return true;
  if (from === 'Same') return routeNs === s.owner.namespace;
  const ns = namespace(routeNs);
  return !!ns && matchesLabels(ns.metadata.labels, l.allowedRoutes?.namespaces?.selector);
}
