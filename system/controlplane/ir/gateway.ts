// One Gateway → its IR and the reports its statuses are made from, as a sequence of stages: listeners validated
// (listeners.ts), the Gateway accepted or not (its parametersRef, a usable listener), routes attached to listeners
// (attach-routes.ts), policies attached and merged per route entry while virtual hosts are built (attach-policies.ts,
// virtual-hosts.ts), and what each policy's attachment came to (policy-reports.ts).
import {
  type Gateway,
  type GatewayClass,
  type GatewayParameters,
  type Namespace,
  type ReferenceGrant,
  roleOf,
  type Secret,
  VENDOR_GROUP,
} from '../model.ts';
import { GatewayPolicies } from './attach-policies.ts';
import { attachRoutes, type RouteParentReport } from './attach-routes.ts';
import { type ListenerReport, type ListenerState, validateListeners } from './listeners.ts';
import type { PolicyInfo } from './policies.ts';
import { type PolicyAncestorReport, policyReports } from './policy-reports.ts';
import type { RouteInfo } from './routes.ts';
import { bad, type GatewayIR, type ObjRef, type Outcome, ok, type ValidationMode } from './types.ts';
import { buildVirtualHosts } from './virtual-hosts.ts';

export interface GatewayWorld {
  gatewayClass(name: string): GatewayClass | undefined;
  gatewayParameters(namespace: string, name: string): GatewayParameters | undefined;
  /** Routes whose parentRefs name this Gateway. */
  routes(gatewayKey: string): RouteInfo[];
  namespace(name: string): Namespace | undefined;
  /** The ReferenceGrants of a namespace (for listeners' certificateRefs). */
  referenceGrants(namespace: string): ReferenceGrant[];
  /** A Secret (listeners' certificateRefs). */
  secret(namespace: string, name: string): Secret | undefined;
  /** Policies with a targetRef `<kind>/<ns>/<name>`. */
  policiesTargeting(kind: 'Gateway' | 'HTTPRoute', namespace: string, name: string): PolicyInfo[];
  /** Policies with a targetSelector for `kind` in `namespace`. */
  policiesSelecting(kind: 'Gateway' | 'HTTPRoute', namespace: string): PolicyInfo[];
}

export interface GatewayReports {
  gateway: ObjRef;
  generation: number;
  accepted: Outcome;
  listeners: ListenerReport[];
  /** route key → one entry per parentRef that names this Gateway */
  routes: Record<string, { generation: number; parents: RouteParentReport[] }>;
  /** policy key → its ancestor status for this Gateway */
  policies: Record<string, { generation: number } & PolicyAncestorReport>;
  /** The GatewayParameters in use (namespace/name), when valid. */
  parameters?: string;
}

export interface GatewayResult {
  key: string;
  /** Absent when the Gateway is not accepted: its proxies keep the last configuration they had. */
  ir?: GatewayIR;
  reports: GatewayReports;
}

/** Is this Gateway ours? Its class must exist and name our controller. */
export function isOurGateway(gw: Gateway, cls: GatewayClass | undefined, controllerName: string): boolean {
  return !!cls && cls.spec?.controllerName === controllerName && !cls.metadata.deletionTimestamp && !!gw.spec;
}

export function buildGateway(gw: Gateway, world: GatewayWorld, opts: { mode: ValidationMode }): GatewayResult {
  const ns = gw.metadata.namespace ?? 'default';
  const name = gw.metadata.name;
  const key = `${ns}/${name}`;
  const gwRef: ObjRef = { kind: 'Gateway', namespace: ns, name };
  const listeners = validateListeners(gw, {
    grants: (n) => world.referenceGrants(n),
    secret: (n, name) => world.secret(n, name),
  });
  const { accepted, params } = gatewayAccepted(gw, world, listeners);
  const routes = attachRoutes(gw, accepted, listeners, world.routes(key), (n) => world.namespace(n));
  const reports: GatewayReports = {
    gateway: gwRef,
    generation: gw.metadata.generation ?? 1,
    accepted,
    listeners: listeners.map((s) => s.report),
    routes: routes.reports,
    policies: {},
    ...(params ? { parameters: params } : {}),
  };
  if (!accepted.ok) return { key, reports };

  // The indexes narrow the policies to those naming this Gateway or a route; attach-policies.ts decides the rest.
  const policies = new GatewayPolicies<PolicyInfo>(
    { namespace: ns, name, labels: gw.metadata.labels },
    [...world.policiesTargeting('Gateway', ns, name), ...world.policiesSelecting('Gateway', ns)],
    (r) => [
      ...world.policiesTargeting('HTTPRoute', r.namespace, r.name),
      ...world.policiesSelecting('HTTPRoute', r.namespace),
    ],
  );
  policies.noteAttached(listeners.filter((s) => s.usable).map((s) => s.l.name));
  const hosts = buildVirtualHosts(listeners, routes.placements, policies);
  reports.policies = policyReports(policies.tallies, opts.mode);
  const ir: GatewayIR = {
    gateway: gwRef,
    role: roleOf(ns, name),
    validation: opts.mode,
    listeners: hosts.listeners,
    clusters: hosts.clusters,
    extAuth: hosts.extAuth,
    findings: hosts.findings,
  };
  return { key, ir, reports };
}

/**
 * The Gateway's Accepted outcome: its parametersRef resolves and at least one listener can take routes. When some listeners
 * are not valid, it is accepted with reason ListenersNotValid (gateway_types.go: "This can be the reason when
 * Accepted is True or False"; conformance GatewayListenerUnsupportedProtocol). When it is not accepted, no listener is
 * programmed.
 */
function gatewayAccepted(
  gw: Gateway,
  world: GatewayWorld,
  listeners: ListenerState[],
): { accepted: Outcome; params?: string } {
  const { outcome, params } = parametersOutcome(gw, world);
  let accepted = outcome;
  const invalid = listeners.filter((s) => !s.valid).map((s) => s.l.name);
  // Not accepted when no listener can take routes; one whose references do not resolve still can (it reports
  // ResolvedRefs=False and counts its routes: conformance GatewayWithAttachedRoutes).
  if (accepted.ok && !listeners.some((s) => s.attachable)) {
    accepted = bad('ListenersNotValid', 'no listener is valid (see status.listeners)');
  } else if (accepted.ok && invalid.length) {
    accepted = ok('ListenersNotValid', `listeners not valid (see status.listeners): ${invalid.join(', ')}`);
  }
  if (!accepted.ok) {
    for (const s of listeners)
      if (s.report.programmed.ok)
        s.report.programmed = bad('Invalid', `the Gateway is not accepted: ${accepted.message}`);
  }
  return { accepted, ...(params ? { params } : {}) };
}

function parametersOutcome(gw: Gateway, world: GatewayWorld): { outcome: Outcome; params?: string } {
  const ref = gw.spec?.infrastructure?.parametersRef;
  if (!ref) return { outcome: ok('Accepted', 'gateway accepted') };
  const ns = gw.metadata.namespace ?? 'default';
  if (ref.group !== VENDOR_GROUP || ref.kind !== 'GatewayParameters') {
    return {
      outcome: bad(
        'InvalidParameters',
        `spec.infrastructure.parametersRef: ${ref.group}/${ref.kind} is not supported (use group ${VENDOR_GROUP}, kind GatewayParameters)`,
      ),
    };
  }
  if (!world.gatewayParameters(ns, ref.name)) {
    return {
      outcome: bad(
        'InvalidParameters',
        `spec.infrastructure.parametersRef: GatewayParameters ${ns}/${ref.name} not found; create it or remove the reference`,
      ),
    };
  }
  return { outcome: ok('Accepted', 'gateway accepted'), params: `${ns}/${ref.name}` };
}
