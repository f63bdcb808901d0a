// Statuses from the reports of the IR stage: pure functions, no timestamps (the status writer keeps each condition's
// lastTransitionTime while its status does not change). Every condition carries the observedGeneration of the object
// it was computed from.

import type { RouteParentReport } from '../ir/attach-routes.ts';
import type { BackendTlsReport } from '../ir/backend-tls.ts';
import type { ExtensionInfo } from '../ir/extensions.ts';
import type { GatewayReports } from '../ir/gateway.ts';
import type { ListenerSetReport } from '../ir/listener-sets.ts';
import type { ListenerReport } from '../ir/listeners.ts';
import type { PolicyInfo } from '../ir/policies.ts';
import type { PolicyAncestorReport } from '../ir/policy-reports.ts';
import type { ObjRef, Outcome } from '../ir/types.ts';
import {
  CONTROLLER_NAME,
  type Condition,
  type Deployment,
  GATEWAY_GROUP,
  type GatewayStatus,
  type PolicyAncestorStatus,
  type RouteParentStatus,
  type Service,
} from '../model.ts';

export type StatusCondition = Omit<Condition, 'lastTransitionTime'>;

/** One object's status as the control plane writes it (the pipeline's status collections hold these). */
export interface StatusUpdate {
  /** Which API object: `<resource>/<ns>/<name>` (cluster-scoped: `<resource>/<name>`). */
  key: string;
  resource:
    | 'gatewayclasses'
    | 'gateways'
    | 'httproutes'
    | 'grpcroutes'
    | 'tcproutes'
    | 'udproutes'
    | 'tlsroutes'
    | 'listenersets'
    | 'trafficpolicies'
    | 'listenerpolicies'
    | 'gatewayextensions'
    | 'backendtlspolicies'
    | 'backendconfigpolicies';
  namespace?: string;
  name: string;
  /** The status we own (for routes and policies: our entries only; the writer keeps other controllers'). */
  status: Record<string, unknown>;
}

export function condition(
  type: string,
  status: boolean,
  reason: string,
  message: string,
  generation: number,
): StatusCondition {
  return { type, status: status ? 'True' : 'False', reason, message, observedGeneration: generation };
}

const fromOutcome = (type: string, o: Outcome, generation: number) =>
  condition(type, o.ok, o.reason, o.message, generation);

/** A proxy's rejection of the configuration a resource produced (validation off). */
export interface Rejection {
  gateway: string;
  node: string;
  typeUrl: string;
  version: string;
  detail: string;
}

export function gatewayClassStatus(generation: number, controllerName: string): { conditions: StatusCondition[] } {
  return {
    conditions: [condition('Accepted', true, 'Accepted', `handled by ${controllerName}`, generation)],
  };
}

export interface ProxyState {
  service?: Service;
  deployment?: Deployment;
  /** The latest rejection by one of the Gateway's proxies, if its config is still rejected. */
  rejection?: Rejection;
}

export function gatewayAddresses(svc: Service | undefined): { type: string; value: string }[] {
  if (!svc) return [];
  if ((svc.spec?.type ?? 'ClusterIP') === 'LoadBalancer') {
    return (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) =>
      i.ip ? [{ type: 'IPAddress', value: i.ip }] : i.hostname ? [{ type: 'Hostname', value: i.hostname }] : [],
    );
  }
  const ip = svc.spec?.clusterIP;
  return ip && ip !== 'None' ? [{ type: 'IPAddress', value: ip }] : [];
}

/**
 * The condition a load balancer writes on a Service whose requested spec.loadBalancerIP it cannot give (the embedded
 * cluster's: lab/embedded/controllers/loadbalancer.ts), as `AddressesAllocated=False` with its reason and message.
 */
export const LB_ALLOCATED_CONDITION = 'AddressesAllocated';

function loadBalancerRefusal(svc: Service | undefined): string | undefined {
  const c = (svc?.status?.conditions ?? []).find((x) => x.type === LB_ALLOCATED_CONDITION);
  return c && c.status === 'False' ? `the load balancer cannot use the requested address: ${c.message}` : undefined;
}

export function gatewayStatus(
  r: GatewayReports,
  proxy: ProxyState,
): Omit<GatewayStatus, 'conditions' | 'listeners'> & {
  conditions: StatusCondition[];
  listeners: ListenerStatusOut[];
} {
  const g = r.generation;
  const requested = r.addresses?.requestedIp;
  // A Gateway asking for a static address shows only that one, once the load balancer gave it.
  const addresses = gatewayAddresses(proxy.service).filter((a) => !requested || a.value === requested);
  const refusal = r.addresses?.notUsable ?? (requested ? loadBalancerRefusal(proxy.service) : undefined);
  let programmed: StatusCondition;
  const name = `${r.gateway.namespace}/${r.gateway.name}`;
  if (!r.accepted.ok)
    programmed = condition('Programmed', false, 'Invalid', `not programmed: ${r.accepted.message}`, g);
  else if (refusal) programmed = condition('Programmed', false, 'AddressNotUsable', refusal, g);
  else if (!addresses.length) {
    programmed = condition(
      'Programmed',
      false,
      'AddressNotAssigned',
      requested
        ? `waiting for Service ${name} to get the requested address ${requested}`
        : `waiting for Service ${name} to get an address`,
      g,
    );
  } else if (!(proxy.deployment?.status?.readyReplicas ?? 0)) {
    programmed = condition('Programmed', false, 'Pending', `waiting for a ready proxy of Deployment ${name}`, g);
  } else if (proxy.rejection) {
    const x = proxy.rejection;
    programmed = condition(
      'Programmed',
      false,
      'Invalid',
      `proxy ${x.node} rejected ${x.typeUrl.split('.').pop()} version ${x.version}: ${x.detail}`,
      g,
    );
  } else {
    const ready = proxy.deployment!.status!.readyReplicas!;
    programmed = condition(
      'Programmed',
      true,
      'Programmed',
      `address ${addresses.map((a) => a.value).join(', ')}; ${ready} ready proxy replica(s)`,
      g,
    );
  }
  return {
    addresses,
    conditions: [
      fromOutcome('Accepted', r.accepted, g),
      programmed,
      ...(r.resolvedRefs ? [fromOutcome('ResolvedRefs', r.resolvedRefs, g)] : []),
      // GEP-91: present while a frontend validation allows the insecure fallback, removed after.
      ...(r.insecureFrontendValidation
        ? [condition('InsecureFrontendValidationMode', true, 'ConfigurationChanged', r.insecureFrontendValidation, g)]
        : []),
    ],
    listeners: r.listeners.map((l) => listenerStatus(l, g)),
    // Only with ListenerSets in play (v1.6.1: "the total number of ListenerSets ... successfully attached").
    ...(Object.keys(r.listenerSets).length ? { attachedListenerSets: r.attachedListenerSets } : {}),
  };
}

interface ListenerStatusOut {
  name: string;
  supportedKinds: { group: string; kind: string }[];
  attachedRoutes: number;
  conditions: StatusCondition[];
}

function listenerStatus(l: ListenerReport, g: number): ListenerStatusOut {
  return {
    name: l.name,
    supportedKinds: l.supportedKinds,
    attachedRoutes: l.attachedRoutes,
    conditions: [
      fromOutcome('Accepted', l.accepted, g),
      fromOutcome('Programmed', l.programmed, g),
      fromOutcome('ResolvedRefs', l.resolvedRefs, g),
      // Conflicted reads True when there is a conflict.
      condition('Conflicted', !l.conflicted.ok, l.conflicted.reason, l.conflicted.message, g),
    ],
  };
}

/**
 * A ListenerSet's status (apis/v1/listenerset_types.go at v1.6.1): Accepted and Programmed from its Gateway's report;
 * an accepted set is Programmed only once its Gateway is (else False, ParentNotProgrammed); its listeners as a
 * Gateway's.
 */
export function listenerSetStatus(
  r: ListenerSetReport,
  gatewayProgrammed: StatusCondition | undefined,
): { conditions: StatusCondition[]; listeners: ListenerStatusOut[] } {
  const g = r.generation;
  let programmed = fromOutcome('Programmed', r.programmed, g);
  if (r.programmed.ok && gatewayProgrammed?.status !== 'True') {
    programmed = condition(
      'Programmed',
      false,
      'ParentNotProgrammed',
      `the parent Gateway is not programmed: ${gatewayProgrammed?.message ?? 'no status yet'}`,
      g,
    );
  }
  return {
    conditions: [fromOutcome('Accepted', r.accepted, g), programmed],
    listeners: r.listeners.map((l) => listenerStatus(l, g)),
  };
}

/** Our entries of an HTTPRoute's status.parents, from every Gateway it names. */
/** One Gateway's report about one route (or policy): what the per-Gateway stage hands to the status stage. */
export interface GatewayReportOf<T> {
  gateway: ObjRef;
  report: T;
}

export function routeParents(
  generation: number,
  reports: GatewayReportOf<{ parents: RouteParentReport[] }>[],
  rejections: Rejection[],
): (Omit<RouteParentStatus, 'conditions'> & { conditions: StatusCondition[] })[] {
  const out: (Omit<RouteParentStatus, 'conditions'> & { conditions: StatusCondition[] })[] = [];
  for (const r of reports) {
    const entry = r.report;
    const gwKey = `${r.gateway.namespace}/${r.gateway.name}`;
    const rej = rejections.find((x) => x.gateway === gwKey);
    for (const p of entry.parents) {
      const conditions = [
        fromOutcome('Accepted', p.accepted, generation),
        fromOutcome('ResolvedRefs', p.resolvedRefs, generation),
      ];
      if (p.partiallyInvalid)
        conditions.push(
          condition('PartiallyInvalid', true, p.partiallyInvalid.reason, p.partiallyInvalid.message, generation),
        );
      if (rej && p.accepted.ok) {
        conditions.push(
          condition(
            'Programmed',
            false,
            'Rejected',
            `proxy ${rej.node} rejected ${rej.typeUrl.split('.').pop()} version ${rej.version} (validation is off): ${rej.detail}`,
            generation,
          ),
        );
      }
      out.push({ parentRef: p.parentRef, controllerName: CONTROLLER_NAME, conditions });
    }
  }
  return out;
}

/** What policyStatus reads of a policy: a TrafficPolicy's PolicyInfo, a ListenerPolicy's or a BackendConfigPolicy's info. */
export type PolicyStatusInput = Pick<PolicyInfo, 'ref' | 'generation' | 'accepted' | 'selectors'> & {
  targetRefs: { kind: string; name: string; sectionName?: string }[];
  extensionRefs?: PolicyInfo['extensionRefs'];
};

function describeTargets(p: PolicyStatusInput): string {
  const refs = p.targetRefs.map(
    (t) => `${t.kind} ${p.ref.namespace}/${t.name}${t.sectionName ? ` (section ${t.sectionName})` : ''}`,
  );
  const sels = p.selectors.map(
    (s) =>
      `${s.kind}s in ${p.ref.namespace} labelled ${Object.entries(s.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')}`,
  );
  return [...refs, ...sels].join('; ') || 'nothing (no targetRefs or targetSelectors)';
}

export function policyStatus(
  p: PolicyStatusInput,
  reports: GatewayReportOf<PolicyAncestorReport>[],
  rejections: Rejection[],
): {
  ancestors: (Omit<PolicyAncestorStatus, 'conditions'> & { conditions: StatusCondition[] })[];
  conditions: StatusCondition[];
} {
  const g = p.generation;
  const ancestors: (Omit<PolicyAncestorStatus, 'conditions'> & { conditions: StatusCondition[] })[] = [];
  const attachedOutcomes: Outcome[] = [];
  let accepted: Outcome = p.accepted;
  for (const r of reports) {
    const rep = r.report;
    accepted = rep.accepted;
    const gwKey = `${r.gateway.namespace}/${r.gateway.name}`;
    const rej = rejections.find((x) => x.gateway === gwKey);
    const conditions = [fromOutcome('Accepted', rep.accepted, g), fromOutcome('Attached', rep.attached, g)];
    if (rep.resolvedRefs) conditions.push(fromOutcome('ResolvedRefs', rep.resolvedRefs, g));
    if (rej) {
      conditions.push(
        condition(
          'Programmed',
          false,
          'Rejected',
          `proxy ${rej.node} rejected ${rej.typeUrl.split('.').pop()} version ${rej.version}: ${rej.detail}`,
          g,
        ),
      );
    }
    attachedOutcomes.push(rep.attached);
    ancestors.push({
      ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace: r.gateway.namespace, name: r.gateway.name },
      controllerName: CONTROLLER_NAME,
      conditions,
    });
  }
  let attached: StatusCondition;
  if (!attachedOutcomes.length) {
    attached = condition(
      'Attached',
      false,
      'TargetNotFound',
      `no target on a gwvendor Gateway matches: ${describeTargets(p)}`,
      g,
    );
  } else {
    const reasons = new Set(attachedOutcomes.map((o) => o.reason));
    const anyOk = attachedOutcomes.some((o) => o.ok);
    const msg = `${attachedOutcomes.length} gateway(s): ${ancestors.map((a, i) => `${a.ancestorRef.namespace}/${a.ancestorRef.name} ${attachedOutcomes[i].reason}`).join(', ')}`;
    if (!anyOk) {
      const reason = reasons.size === 1 ? [...reasons][0] : 'Overridden';
      attached = condition('Attached', false, reason, reasons.size === 1 ? attachedOutcomes[0].message : msg, g);
    } else if (reasons.size === 1 && reasons.has('Attached')) {
      attached = condition(
        'Attached',
        true,
        'Attached',
        attachedOutcomes.length === 1 ? attachedOutcomes[0].message : msg,
        g,
      );
    } else {
      attached = condition(
        'Attached',
        true,
        'Merged',
        attachedOutcomes.length === 1 ? attachedOutcomes[0].message : msg,
        g,
      );
    }
  }
  const conditions = [fromOutcome('Accepted', accepted, g), attached];
  if (p.extensionRefs) conditions.push(fromOutcome('ResolvedRefs', p.extensionRefs, g));
  return { ancestors, conditions };
}

export function extensionStatus(e: ExtensionInfo): { conditions: StatusCondition[] } {
  return {
    conditions: [
      fromOutcome('Accepted', e.accepted, e.generation),
      fromOutcome('ResolvedRefs', e.resolvedRefs, e.generation),
    ],
  };
}

/**
 * A BackendTLSPolicy's status: one ancestor per Gateway whose routes use a Service it targets, with Accepted and
 * ResolvedRefs (GEP-1897; conformance's BackendTLSPolicyMustHaveCondition reads them per Gateway).
 */
export function backendTlsPolicyStatus(reports: GatewayReportOf<BackendTlsReport>[]): {
  ancestors: (Omit<PolicyAncestorStatus, 'conditions'> & { conditions: StatusCondition[] })[];
} {
  return {
    ancestors: reports.map((r) => ({
      ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace: r.gateway.namespace, name: r.gateway.name },
      controllerName: CONTROLLER_NAME,
      conditions: [
        fromOutcome('Accepted', r.report.accepted, r.report.generation),
        fromOutcome('ResolvedRefs', r.report.resolvedRefs, r.report.generation),
      ],
    })),
  };
}
