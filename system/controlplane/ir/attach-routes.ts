// HTTPRoutes → a Gateway's listeners, as the Gateway API's "attaching routes to Gateways" asks: for each parentRef
// that names the Gateway, its sectionName and port pick candidate listeners, their allowedRoutes (namespaces, kinds)
// admit the route or not, and the hostname intersection decides the hostnames it is served under. Each such parentRef
// gets the report its status entry is made from; each admitted (listener, route) pair is a placement.
import { GATEWAY_GROUP, type Gateway, type Listener, matchesLabels, type Namespace, type ParentRef } from '../model.ts';
import { intersectHostnames } from './hostnames.ts';
import type { ListenerState } from './listeners.ts';
import type { NormalizedParentRef, RouteInfo } from './routes.ts';
import { bad, compareStrings, type Outcome, ok } from './types.ts';

export interface RouteParentReport {
  parentRef: ParentRef;
  accepted: Outcome;
  resolvedRefs: Outcome;
  partiallyInvalid?: Outcome;
}

/** A route served on one listener, under the hostnames both allow. */
export interface Placement {
  s: ListenerState;
  r: RouteInfo;
  hosts: string[];
}

export interface RouteAttachment {
  /** In route order (namespace/name), then parentRef and listener order. */
  placements: Placement[];
  /** route key → one entry per parentRef that names this Gateway */
  reports: Record<string, { generation: number; parents: RouteParentReport[] }>;
}

/**
 * Places `routes` (those whose parentRefs name the Gateway) on its listeners and counts each listener's attached
 * routes. With the Gateway not accepted, every parentRef reads NoMatchingParent and nothing is placed.
 */
export function attachRoutes(
  gw: Gateway,
  gatewayAccepted: Outcome,
  listeners: ListenerState[],
  routes: RouteInfo[],
  namespace: (name: string) => Namespace | undefined,
): RouteAttachment {
  const ns = gw.metadata.namespace ?? 'default';
  const out: RouteAttachment = { placements: [], reports: {} };
  const sorted = [...routes].sort((a, b) =>
    compareStrings(`${a.ref.namespace}/${a.ref.name}`, `${b.ref.namespace}/${b.ref.name}`),
  );
  for (const r of sorted) {
    const parents: RouteParentReport[] = [];
    const attachedTo = new Set<string>();
    for (const p of r.parentRefs) {
      if (!parentMatchesGateway(p, ns, gw.metadata.name)) continue;
      const { report, matching } = attachParentRef(gw, gatewayAccepted, listeners, r, p, namespace);
      parents.push(report);
      for (const m of matching) {
        if (attachedTo.has(m.s.l.name)) continue;
        attachedTo.add(m.s.l.name);
        out.placements.push({ s: m.s, r, hosts: m.hosts });
      }
    }
    if (parents.length) out.reports[`${r.ref.namespace}/${r.ref.name}`] = { generation: r.generation, parents };
  }
  for (const pl of out.placements) pl.s.report.attachedRoutes++;
  return out;
}

/** One parentRef of the route that names the Gateway: its report, and the listeners (with hostnames) it admits. */
function attachParentRef(
  gw: Gateway,
  gatewayAccepted: Outcome,
  listeners: ListenerState[],
  r: RouteInfo,
  p: NormalizedParentRef,
  namespace: (name: string) => Namespace | undefined,
): { report: RouteParentReport; matching: { s: ListenerState; hosts: string[] }[] } {
  const key = `${gw.metadata.namespace ?? 'default'}/${gw.metadata.name}`;
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
    return refuse('NoMatchingParent', `Gateway ${key} is not accepted: ${gatewayAccepted.message}`);
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
    return refuse('NoMatchingParent', `Gateway ${key} has no listener with ${what}`);
  }
  const allowed = candidates.filter((s) => s.attachable && namespaceAllowed(gw, s.l, r.ref.namespace, namespace));
  if (!allowed.length) {
    return refuse(
      'NotAllowedByListeners',
      `listeners ${candidates.map((s) => s.l.name).join(', ')} of Gateway ${key} do not allow HTTPRoutes from namespace ${r.ref.namespace}`,
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
    report.partiallyInvalid = bad(
      'UnsupportedValue',
      `rules dropped: ${r.droppedRules.map((d) => `spec.rules[${d.rule}]: ${d.message}`).join('; ')}`,
    );
  }
  return { report, matching };
}

function parentMatchesGateway(p: NormalizedParentRef, gwNs: string, gwName: string): boolean {
  return p.group === GATEWAY_GROUP && p.kind === 'Gateway' && p.namespace === gwNs && p.name === gwName;
}

/** allowedRoutes.namespaces: Same (default), All, or a Selector over the route namespace's labels. */
function namespaceAllowed(
  gw: Gateway,
  l: Listener,
  routeNs: string,
  namespace: (name: string) => Namespace | undefined,
): boolean {
  const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'All') return true;
  if (from === 'Same') return routeNs === gw.metadata.namespace;
  const ns = namespace(routeNs);
  return !!ns && matchesLabels(ns.metadata.labels, l.allowedRoutes?.namespaces?.selector);
}
