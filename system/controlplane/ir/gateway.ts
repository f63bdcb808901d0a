// One Gateway → its IR and the reports its statuses are made from, as a sequence of stages: the ListenerSets its
// allowedListeners admit (listener-sets.ts), listeners validated (listeners.ts), the Gateway accepted or not (its
// parametersRef, a usable listener), routes attached to listeners (attach-routes.ts), policies attached and merged
// per route entry while virtual hosts are built (attach-policies.ts, virtual-hosts.ts), TCP and UDP listeners
// (l4-listeners.ts), and what each policy's attachment came to (policy-reports.ts).

import {
  type ConfigMap,
  GATEWAY_GROUP,
  type Gateway,
  type GatewayClass,
  type GatewayParameters,
  type ListenerSet,
  type Namespace,
  type ReferenceGrant,
  roleOf,
  type Secret,
  type Service,
  VENDOR_GROUP,
} from '../model.ts';
import { GatewayPolicies } from './attach-policies.ts';
import { attachRoutes, type RouteParentReport, routeReportKey } from './attach-routes.ts';
import { applyBackendConfig, type BackendConfigInfo, type BackendConfigReport } from './backend-config-policy.ts';
import { applyBackendTls, type BackendTlsInfo, type BackendTlsReport } from './backend-tls.ts';
import { applyFrontendValidation } from './frontend-tls.ts';
import { buildL4Listeners } from './l4-listeners.ts';
import type { L4RouteInfo } from './l4-routes.ts';
import { applyListenerPolicies, type ListenerPolicyInfo } from './listener-policy.ts';
import { admitListenerSets, type ListenerSetReport, listenerSetReports } from './listener-sets.ts';
import { type ListenerReport, type ListenerState, resolveCertificateRef, validateListeners } from './listeners.ts';
import type { PolicyInfo } from './policies.ts';
import { type PolicyAncestorReport, policyReports } from './policy-reports.ts';
import type { RouteInfo } from './routes.ts';
import { type StaticAddresses, staticAddresses } from './static-addresses.ts';
import { bad, compareStrings, type GatewayIR, type ObjRef, type Outcome, ok, type ValidationMode } from './types.ts';
import { buildVirtualHosts } from './virtual-hosts.ts';

export interface GatewayWorld {
  gatewayClass(name: string): GatewayClass | undefined;
  gatewayParameters(namespace: string, name: string): GatewayParameters | undefined;
  /**
   * HTTPRoutes and GRPCRoutes whose parentRefs name this Gateway (`<ns>/<name>`) or a ListenerSet
   * (`ListenerSet/<ns>/<name>`).
   */
  routes(parentKey: string): RouteInfo[];
  /** TCPRoutes and UDPRoutes, looked up the same way. */
  l4Routes(parentKey: string): L4RouteInfo[];
  /** ListenerSets whose parentRef names this Gateway. */
  listenerSets(gatewayKey: string): ListenerSet[];
  namespace(name: string): Namespace | undefined;
  /** The ReferenceGrants of a namespace (for listeners' certificateRefs). */
  referenceGrants(namespace: string): ReferenceGrant[];
  /** A Secret (listeners' certificateRefs). */
  secret(namespace: string, name: string): Secret | undefined;
  /** A ConfigMap (spec.tls.frontend caCertificateRefs). */
  configMap(namespace: string, name: string): ConfigMap | undefined;
  /** Policies with a targetRef `<kind>/<ns>/<name>`. */
  policiesTargeting(kind: 'Gateway' | 'HTTPRoute', namespace: string, name: string): PolicyInfo[];
  /** Policies with a targetSelector for `kind` in `namespace`. */
  policiesSelecting(kind: 'Gateway' | 'HTTPRoute', namespace: string): PolicyInfo[];
  /** BackendTLSPolicies with a targetRef to this Service (any section). */
  backendTlsPolicies(namespace: string, service: string): BackendTlsInfo[];
  /** BackendConfigPolicies with a targetRef to this Service (any section). */
  backendConfigPolicies(namespace: string, service: string): BackendConfigInfo[];
  /** A Service (the port names BackendTLSPolicies' sectionNames select). */
  service(namespace: string, name: string): Service | undefined;
  /** ListenerPolicies with a targetRef to this Gateway. */
  listenerPolicies(namespace: string, gateway: string): ListenerPolicyInfo[];
}

export interface GatewayReports {
  gateway: ObjRef;
  generation: number;
  accepted: Outcome;
  listeners: ListenerReport[];
  /** route key (routeReportKey: HTTPRoute `<ns>/<name>`, `GRPCRoute/<ns>/<name>`) → one entry per parentRef naming it */
  routes: Record<string, { generation: number; parents: RouteParentReport[] }>;
  /** `<TCPRoute|UDPRoute>/<ns>/<name>` → one entry per parentRef that names this Gateway or one of its ListenerSets */
  l4Routes: Record<string, { generation: number; parents: RouteParentReport[] }>;
  /** ListenerSet key → its status for this Gateway */
  listenerSets: Record<string, ListenerSetReport>;
  /** ListenerSets attached (selected by allowedListeners and Accepted): status.attachedListenerSets */
  attachedListenerSets: number;
  /** policy key → its ancestor status for this Gateway */
  policies: Record<string, { generation: number } & PolicyAncestorReport>;
  /** BackendTLSPolicy key → its ancestor status for this Gateway (policies targeting a Service its routes use). */
  backendTlsPolicies: Record<string, BackendTlsReport>;
  /** BackendConfigPolicy key → its ancestor status for this Gateway (policies targeting a Service its routes use). */
  backendConfigPolicies: Record<string, BackendConfigReport>;
  /** ListenerPolicy key → its ancestor status for this Gateway (ir/listener-policy.ts). */
  listenerPolicies: Record<string, { generation: number } & PolicyAncestorReport>;
  /** The GatewayParameters in use (namespace/name), when valid. */
  parameters?: string;
  /** GEP-91: why the InsecureFrontendValidationMode condition is True (absent: the condition is not set). */
  insecureFrontendValidation?: string;
  /** The Gateway's ResolvedRefs, when it has references of its own (spec.tls.backend.clientCertificateRef). */
  resolvedRefs?: Outcome;
  /** spec.addresses as the load balancer is asked for them (static-addresses.ts): the one requested, or why none. */
  addresses?: Pick<StaticAddresses, 'requestedIp' | 'notUsable'>;
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
  const sets = admitListenerSets(gw, world.listenerSets(key), (n) => world.namespace(n));
  const refs = {
    grants: (n: string) => world.referenceGrants(n),
    secret: (n: string, secretName: string) => world.secret(n, secretName),
  };
  const listeners = validateListeners(gw, sets.admitted, refs);
  const frontend = applyFrontendValidation(gw, listeners, { ...refs, configMap: world.configMap });
  const { accepted, params } = gatewayAccepted(gw, world, listeners);
  const nsOf = (n: string) => world.namespace(n);
  const parentKeys = [key, ...sets.admitted.map((a) => `ListenerSet/${a.owner.namespace}/${a.owner.name}`)];
  const unique = <R extends { ref: { kind: string; namespace: string; name: string } }>(list: R[]) => [
    ...new Map(list.map((r) => [`${r.ref.kind}/${r.ref.namespace}/${r.ref.name}`, r])).values(),
  ];
  const routes = attachRoutes(gw, accepted, listeners, unique(parentKeys.flatMap(world.routes)), nsOf);
  const l4 = attachRoutes(gw, accepted, listeners, unique(parentKeys.flatMap(world.l4Routes)), nsOf);
  const setReports = listenerSetReports(gw, accepted, sets, listeners);
  reportRefusedSetParents(sets.refused, setReports, world, routes.reports, l4.reports);
  const reports: GatewayReports = {
    gateway: gwRef,
    generation: gw.metadata.generation ?? 1,
    accepted,
    listeners: listeners.filter((s) => s.owner.kind === 'Gateway').map((s) => s.report),
    routes: routes.reports,
    l4Routes: l4.reports,
    listenerSets: setReports,
    attachedListenerSets: Object.values(setReports).filter((r) => r.accepted.ok).length,
    policies: {},
    backendTlsPolicies: {},
    backendConfigPolicies: {},
    listenerPolicies: {},
    ...(params ? { parameters: params } : {}),
    ...addressesReport(gw),
    ...(frontend.insecure ? { insecureFrontendValidation: frontend.insecure } : {}),
  };
  if (!accepted.ok) return { key, reports };

  // The indexes narrow the policies to those naming this Gateway or a route; attach-policies.ts decides the rest.
  const policies = new GatewayPolicies<PolicyInfo>(
    { namespace: ns, name, labels: gw.metadata.labels },
    [...world.policiesTargeting('Gateway', ns, name), ...world.policiesSelecting('Gateway', ns)],
    // TrafficPolicies target HTTPRoutes; a GRPCRoute's entries get the Gateway's and listeners' policies only.
    (r) =>
      r.kind === 'GRPCRoute'
        ? []
        : [
            ...world.policiesTargeting('HTTPRoute', r.namespace, r.name),
            ...world.policiesSelecting('HTTPRoute', r.namespace),
          ],
  );
  policies.noteAttached(listeners.filter((s) => s.usable && s.owner.kind === 'Gateway').map((s) => s.l.name));
  const hosts = buildVirtualHosts(listeners, routes.placements, policies);
  const l4Listeners = buildL4Listeners(listeners, l4.placements);
  const client = backendClientCertificate(gw, world);
  if (client) reports.resolvedRefs = client.outcome;
  const btls = applyBackendTls(hosts.clusters, world.backendTlsPolicies, world.service, client?.certificate);
  reports.backendTlsPolicies = btls.reports;
  const bcp = applyBackendConfig(
    [...btls.clusters, ...l4Listeners.clusters],
    world.backendConfigPolicies,
    world.service,
  );
  reports.backendConfigPolicies = bcp.reports;
  const clusters = new Map(bcp.clusters.map((c) => [c.name, c]));
  reports.policies = policyReports(policies.tallies, opts.mode);
  const defaultAccessLog = defaultAccessLogSource(gw, world, params);
  reports.listenerPolicies = applyListenerPolicies(gwRef, hosts.listeners, world.listenerPolicies(ns, name), {
    mode: opts.mode,
    allListenerNames: listeners.filter((s) => s.owner.kind === 'Gateway').map((s) => s.l.name),
    ...(defaultAccessLog ? { defaultAccessLog } : {}),
  });
  const ir: GatewayIR = {
    gateway: gwRef,
    role: roleOf(ns, name),
    validation: opts.mode,
    listeners: hosts.listeners,
    ...(l4Listeners.listeners.length ? { l4Listeners: l4Listeners.listeners } : {}),
    clusters: [...clusters.values()].sort((a, b) => compareStrings(a.name, b.name)),
    extAuth: hosts.extAuth,
    findings: hosts.findings,
  };
  return { key, ir, reports };
}

/**
 * The Gateway's `spec.tls.backend.clientCertificateRef` (GEP-3155, conformance GatewayTLSBackendClientCertificate,
 * GatewayInvalidTLSBackendConfiguration): the certificate its proxies present to TLS backends, and the Gateway's
 * ResolvedRefs (False/InvalidClientCertificateRef or RefNotPermitted; the Gateway stays Accepted). Undefined: none set.
 */
function backendClientCertificate(gw: Gateway, world: GatewayWorld) {
  const ref = gw.spec?.tls?.backend?.clientCertificateRef;
  if (!ref) return undefined;
  const from = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gw.metadata.namespace ?? 'default' };
  const r = resolveCertificateRef(
    ref,
    from,
    'spec.tls.backend.clientCertificateRef',
    {
      grants: (n) => world.referenceGrants(n),
      secret: (n, name) => world.secret(n, name),
    },
    'InvalidClientCertificateRef',
  );
  if ('problem' in r) return { outcome: r.problem };
  return { outcome: ok('ResolvedRefs', 'references resolved'), certificate: r.certificate };
}

/**
 * Routes whose parentRef names a ListenerSet the Gateway does not admit: that parentRef is not accepted
 * (NoMatchingParent, saying why the set is not attached), so the route's status tells what to fix.
 */
function reportRefusedSetParents(
  refused: ListenerSet[],
  setReports: Record<string, ListenerSetReport>,
  world: GatewayWorld,
  httpReports: GatewayReports['routes'],
  l4Reports: GatewayReports['l4Routes'],
): void {
  for (const set of refused) {
    const ns = set.metadata.namespace ?? 'default';
    const why = setReports[`${ns}/${set.metadata.name}`].accepted.message;
    const key = `ListenerSet/${ns}/${set.metadata.name}`;
    const add = (r: RouteInfo | L4RouteInfo, reports: GatewayReports['routes'], reportKey: string) => {
      for (const p of r.parentRefs) {
        if (p.kind !== 'ListenerSet' || p.namespace !== ns || p.name !== set.metadata.name) continue;
        reports[reportKey] ??= { generation: r.generation, parents: [] };
        reports[reportKey].parents.push({
          parentRef: p.original,
          accepted: bad('NoMatchingParent', `ListenerSet ${ns}/${set.metadata.name} is not attached: ${why}`),
          resolvedRefs: r.resolvedRefs,
        });
      }
    };
    for (const r of world.routes(key)) add(r, httpReports, routeReportKey(r));
    for (const r of world.l4Routes(key)) add(r, l4Reports, routeReportKey(r));
  }
}

/**
 * The Gateway's Accepted outcome: its parametersRef resolves and at least one listener can take routes. When some of
 * its own listeners are not valid, it is accepted with reason ListenersNotValid (gateway_types.go: "This can be the reason when
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
  const unsupportedAddress = staticAddresses(gw).unsupported;
  if (accepted.ok && unsupportedAddress) accepted = bad('UnsupportedAddress', unsupportedAddress);
  const invalid = listeners.filter((s) => s.owner.kind === 'Gateway' && !s.valid).map((s) => s.l.name);
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

/**
 * The GatewayParameters (`<ns>/<name>`) whose defaultAccessLog is on for this Gateway: its own parametersRef's when
 * that one says (enabled true or false), else its GatewayClass's parametersRef (a GatewayParameters, with its
 * namespace), as the lab's class has (lab/install.ts).
 */
function defaultAccessLogSource(gw: Gateway, world: GatewayWorld, params: string | undefined): string | undefined {
  if (params) {
    const [ns, name] = params.split('/');
    const own = world.gatewayParameters(ns!, name!)?.spec?.defaultAccessLog?.enabled;
    if (own !== undefined) return own ? params : undefined;
  }
  const ref = world.gatewayClass(gw.spec?.gatewayClassName ?? '')?.spec?.parametersRef as
    | { group?: string; kind?: string; name?: string; namespace?: string }
    | undefined;
  if (ref?.group !== VENDOR_GROUP || ref.kind !== 'GatewayParameters' || !ref.name || !ref.namespace) return undefined;
  const cls = world.gatewayParameters(ref.namespace, ref.name);
  return cls?.spec?.defaultAccessLog?.enabled ? `${ref.namespace}/${ref.name}` : undefined;
}

function addressesReport(gw: Gateway): Pick<GatewayReports, 'addresses'> {
  const { requestedIp, notUsable } = staticAddresses(gw);
  if (!requestedIp && !notUsable) return {};
  return { addresses: { ...(requestedIp ? { requestedIp } : {}), ...(notUsable ? { notUsable } : {}) } };
}
