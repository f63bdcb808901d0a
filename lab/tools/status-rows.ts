// lab:status rows, derived from objects as the API server returns them and from the control plane's /snapshots/xds:
// pure functions, so the judgement of what is wrong is tested without a cluster.
//
// The judgement, stated once (lab:status --help repeats it): a row is a problem when a condition Accepted,
// Programmed or ResolvedRefs is False, or a proxy NACKed a type; it is a warning when any other condition is in its
// bad state (False, Unknown; True for Conflicted and PartiallyInvalid), when the status is older than the object's
// generation, or when no controller wrote a status at all.
import { extensionBackendRefs } from '../../system/controlplane/model.ts';
import type { KObj } from '../toolkit/kube.ts';

export type Health = 'ok' | 'warning' | 'problem';

export type StatusKind =
  | 'GatewayClass'
  | 'Gateway'
  | 'ListenerSet'
  | 'HTTPRoute'
  | 'GRPCRoute'
  | 'TCPRoute'
  | 'UDPRoute'
  | 'TLSRoute'
  | 'TrafficPolicy'
  | 'BackendConfigPolicy'
  | 'ListenerPolicy'
  | 'GatewayExtension';

export interface ConditionRow {
  kind: StatusKind;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  name: string;
  /** PARENT/TARGET: the Gateway a route entry is about, a policy's ancestor or targets, a Gateway's class. */
  target: string;
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  generation?: number;
  /** The condition was computed from an older generation: the controller has not caught up with the last edit. */
  stale: boolean;
  health: Health;
}

const MUST_BE_TRUE = new Set(['Accepted', 'Programmed', 'ResolvedRefs']);
/** Conditions whose True is the bad state. */
const NEGATIVE = new Set(['Conflicted', 'PartiallyInvalid']);

interface RawCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export function conditionHealth(c: { type: string; status: string }, stale: boolean): Health {
  if (MUST_BE_TRUE.has(c.type) && c.status === 'False') return 'problem';
  const bad = NEGATIVE.has(c.type) ? c.status !== 'False' : c.status !== 'True';
  return bad || stale ? 'warning' : 'ok';
}

function rowsOf(
  o: KObj,
  kind: StatusKind,
  target: string,
  conditions: RawCondition[] | undefined,
  opts: { onlyUnhealthy?: boolean } = {},
): ConditionRow[] {
  const generation = o.metadata?.generation;
  const rows = (conditions ?? []).map((c) => {
    const stale = c.observedGeneration !== undefined && generation !== undefined && c.observedGeneration < generation;
    const type = c.type ?? '';
    const status = c.status ?? 'Unknown';
    return {
      kind,
      namespace: o.metadata?.namespace ?? '',
      name: o.metadata?.name ?? '',
      target,
      type,
      status,
      reason: c.reason ?? '',
      message: c.message ?? '',
      observedGeneration: c.observedGeneration,
      generation,
      stale,
      health: conditionHealth({ type, status }, stale),
    };
  });
  return opts.onlyUnhealthy ? rows.filter((r) => r.health !== 'ok') : rows;
}

/** The row of an object no controller has written a status for (a warning: nothing has looked at it yet). */
function noStatusRow(o: KObj, kind: StatusKind, target: string, why: string): ConditionRow {
  return {
    kind,
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    target,
    type: '',
    status: '',
    reason: 'NoStatus',
    message: why,
    generation: o.metadata?.generation,
    stale: false,
    health: 'warning',
  };
}

const ref = (r: { kind?: string; namespace?: string; name?: string; sectionName?: string }, ns: string) =>
  `${(r.kind ?? 'Gateway').toLowerCase()}/${r.namespace ?? ns}/${r.name ?? ''}${r.sectionName ? `:${r.sectionName}` : ''}`;

export function gatewayClassRows(c: KObj): ConditionRow[] {
  const target = c.spec?.controllerName ?? '';
  const conds = c.status?.conditions;
  if (!conds?.length) return [noStatusRow(c, 'GatewayClass', target, `no controller (${target}) has accepted it`)];
  return rowsOf(c, 'GatewayClass', target, conds);
}

/** A Gateway's conditions; its listeners' conditions only with `verbose` or when one is not ok. */
export function gatewayRows(g: KObj, opts: { verbose?: boolean } = {}): ConditionRow[] {
  const target = `gatewayclass/${g.spec?.gatewayClassName ?? ''}`;
  const conds = g.status?.conditions;
  const rows = conds?.length
    ? rowsOf(g, 'Gateway', target, conds)
    : [
        noStatusRow(
          g,
          'Gateway',
          target,
          `no controller has written a status (is GatewayClass ${g.spec?.gatewayClassName} accepted?)`,
        ),
      ];
  for (const l of g.status?.listeners ?? []) {
    rows.push(...rowsOf(g, 'Gateway', `listener/${l.name}`, l.conditions, { onlyUnhealthy: !opts.verbose }));
  }
  return rows;
}

export function httpRouteRows(r: KObj): ConditionRow[] {
  return routeRows(r, 'HTTPRoute');
}

/** A route's parents' conditions (HTTPRoute, GRPCRoute, TCPRoute, UDPRoute, TLSRoute: the same status.parents). */
export function routeRows(
  r: KObj,
  kind: 'HTTPRoute' | 'GRPCRoute' | 'TCPRoute' | 'UDPRoute' | 'TLSRoute',
): ConditionRow[] {
  const ns = r.metadata?.namespace ?? '';
  const parents: any[] = r.status?.parents ?? [];
  if (!parents.length) {
    const named = (r.spec?.parentRefs ?? []).map((p: any) => ref(p, ns)).join(', ') || 'no parentRefs';
    return [noStatusRow(r, kind, named, `no controller has written a status for its parents (${named})`)];
  }
  return parents.flatMap((p) => rowsOf(r, kind, ref(p.parentRef ?? {}, ns), p.conditions));
}

/** A ListenerSet's conditions (Accepted, Programmed); its listeners' only with `verbose` or when one is not ok. */
export function listenerSetRows(l: KObj, opts: { verbose?: boolean } = {}): ConditionRow[] {
  const ns = l.metadata?.namespace ?? '';
  const target = ref({ ...l.spec?.parentRef, kind: l.spec?.parentRef?.kind ?? 'Gateway' }, ns);
  const conds: any[] = l.status?.conditions ?? [];
  // The CRD defaults both conditions to Unknown/Pending: no controller has looked at it yet.
  if (!conds.length || conds.every((c) => c.reason === 'Pending')) {
    return [noStatusRow(l, 'ListenerSet', target, `no controller has accepted it for its parent (${target})`)];
  }
  const rows = rowsOf(l, 'ListenerSet', target, conds);
  for (const x of l.status?.listeners ?? []) {
    rows.push(...rowsOf(l, 'ListenerSet', `listener/${x.name}`, x.conditions, { onlyUnhealthy: !opts.verbose }));
  }
  return rows;
}

/** What a policy says it attaches to: its targetRefs and selectors, as written. */
export function policyTargets(p: KObj): string {
  const refs = (p.spec?.targetRefs ?? []).map(
    (t: any) => `${String(t.kind).toLowerCase()}/${t.name}${t.sectionName ? `:${t.sectionName}` : ''}`,
  );
  const sels = (p.spec?.targetSelectors ?? []).map(
    (s: any) =>
      `${String(s.kind).toLowerCase()}{${Object.entries(s.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',')}}`,
  );
  return [...refs, ...sels].join(', ');
}

/**
 * One row per policy condition. The control plane writes each condition per ancestor Gateway and again, summed up,
 * at the top level (interfaces page, "Policies"), so the top-level one is shown only where no ancestor has that type
 * — as for a policy that attaches to nothing (Attached=False/TargetNotFound, no ancestors), TARGET its targets as
 * written; the ancestor rows' TARGET is the Gateway.
 */
export function trafficPolicyRows(p: KObj): ConditionRow[] {
  return policyRows(p, 'TrafficPolicy');
}

/** A vendor policy's rows (TrafficPolicy, ListenerPolicy, BackendConfigPolicy: the same status shape, ancestors and top level). */
export function policyRows(p: KObj, kind: 'TrafficPolicy' | 'ListenerPolicy' | 'BackendConfigPolicy'): ConditionRow[] {
  const ns = p.metadata?.namespace ?? '';
  const top: RawCondition[] = p.status?.conditions ?? [];
  const ancestors: any[] = p.status?.ancestors ?? [];
  if (!top.length && !ancestors.length) {
    return [noStatusRow(p, kind, policyTargets(p), 'no controller has written a status')];
  }
  const perAncestor = new Set(ancestors.flatMap((a) => (a.conditions ?? []).map((c: RawCondition) => c.type)));
  return [
    ...rowsOf(
      p,
      kind,
      policyTargets(p),
      top.filter((c) => !perAncestor.has(c.type)),
    ),
    ...ancestors.flatMap((a) => rowsOf(p, kind, ref(a.ancestorRef ?? {}, ns), a.conditions)),
  ];
}

export function gatewayExtensionRows(e: KObj): ConditionRow[] {
  const b = extensionBackendRefs(e.spec)[0]?.ref;
  const target = b ? `service/${b.namespace ?? e.metadata?.namespace}/${b.name}:${b.port}` : '';
  const conds = e.status?.conditions;
  if (!conds?.length) return [noStatusRow(e, 'GatewayExtension', target, 'no controller has written a status')];
  return rowsOf(e, 'GatewayExtension', target, conds);
}

export interface StatusObjects {
  gatewayClasses: KObj[];
  gateways: KObj[];
  /** Gateway API v1.6.1 kinds: absent (or empty) on a cluster without their CRDs. */
  listenerSets?: KObj[];
  httpRoutes: KObj[];
  grpcRoutes?: KObj[];
  tcpRoutes?: KObj[];
  udpRoutes?: KObj[];
  tlsRoutes?: KObj[];
  trafficPolicies: KObj[];
  /** Absent (or empty) on a cluster installed before the kind. */
  backendConfigPolicies?: KObj[];
  /** Absent (or empty) on a cluster without the ListenerPolicy CRD. */
  listenerPolicies?: KObj[];
  gatewayExtensions: KObj[];
}

const byNsName = (a: KObj, b: KObj) =>
  (a.metadata?.namespace ?? '').localeCompare(b.metadata?.namespace ?? '') ||
  (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');

/**
 * Every row, kind by kind (classes, Gateways, ListenerSets, routes, policies, extensions), each sorted by namespace
 * and name.
 */
export function conditionRows(o: StatusObjects, opts: { verbose?: boolean } = {}): ConditionRow[] {
  return [
    ...[...o.gatewayClasses].sort(byNsName).flatMap(gatewayClassRows),
    ...[...o.gateways].sort(byNsName).flatMap((g) => gatewayRows(g, opts)),
    ...[...(o.listenerSets ?? [])].sort(byNsName).flatMap((l) => listenerSetRows(l, opts)),
    ...[...o.httpRoutes].sort(byNsName).flatMap(httpRouteRows),
    ...[...(o.grpcRoutes ?? [])].sort(byNsName).flatMap((r) => routeRows(r, 'GRPCRoute')),
    ...[...(o.tcpRoutes ?? [])].sort(byNsName).flatMap((r) => routeRows(r, 'TCPRoute')),
    ...[...(o.udpRoutes ?? [])].sort(byNsName).flatMap((r) => routeRows(r, 'UDPRoute')),
    ...[...(o.tlsRoutes ?? [])].sort(byNsName).flatMap((r) => routeRows(r, 'TLSRoute')),
    ...[...o.trafficPolicies].sort(byNsName).flatMap(trafficPolicyRows),
    ...[...(o.backendConfigPolicies ?? [])].sort(byNsName).flatMap((p) => policyRows(p, 'BackendConfigPolicy')),
    ...[...(o.listenerPolicies ?? [])].sort(byNsName).flatMap((p) => policyRows(p, 'ListenerPolicy')),
    ...[...o.gatewayExtensions].sort(byNsName).flatMap(gatewayExtensionRows),
  ];
}

// ---- proxies (/snapshots/xds) ----------------------------------------------------------------------------------

export interface ProxyRow {
  role: string;
  /** `<ns>/<gateway>` from the role. */
  gateway: string;
  node: string;
  /** The role's snapshot version (every type's version is at most this). */
  snapshotVersion?: string;
  /** clusters | endpoints | listeners | routes */
  type: string;
  /** REQUESTED | SENT | ACKED | NACKED, as the control plane tracks it. */
  status: string;
  sent?: string;
  acked?: string;
  lastNack?: { version?: string; detail?: string; at?: string };
  health: Health;
}

export const ROLE_PREFIX = 'gwvendor-kube-gateway-api';

/** `gwvendor-kube-gateway-api~<ns>~<gw>` → `<ns>/<gw>` (the role as written when it has another shape). */
export function gatewayOfRole(role: string): string {
  const parts = role.split('~');
  return parts.length === 3 && parts[0] === ROLE_PREFIX ? `${parts[1]}/${parts[2]}` : role;
}

/**
 * One row per connected proxy and xDS type, from `/snapshots/xds`'s `data`. A NACK is a problem even when an older
 * version is still served: the proxy is not running what the control plane computed. A type sent and not yet
 * answered is a warning.
 */
export function proxyRows(data: Record<string, any>, opts: { namespace?: string } = {}): ProxyRow[] {
  const rows: ProxyRow[] = [];
  for (const role of Object.keys(data).sort()) {
    const gateway = gatewayOfRole(role);
    if (opts.namespace && gateway.split('/')[0] !== opts.namespace) continue;
    const entry = data[role] ?? {};
    for (const node of Object.keys(entry.proxies ?? {}).sort()) {
      const types = entry.proxies[node]?.types ?? {};
      for (const type of Object.keys(types)) {
        const t = types[type] ?? {};
        const status = String(t.status ?? 'UNKNOWN');
        rows.push({
          role,
          gateway,
          node,
          ...(entry.version !== undefined ? { snapshotVersion: String(entry.version) } : {}),
          type,
          status,
          ...(t.version_sent !== undefined ? { sent: String(t.version_sent) } : {}),
          ...(t.version_acked !== undefined ? { acked: String(t.version_acked) } : {}),
          ...(t.last_nack ? { lastNack: t.last_nack } : {}),
          health: status === 'NACKED' ? 'problem' : status === 'ACKED' ? 'ok' : 'warning',
        });
      }
    }
  }
  return rows;
}

/** `<kind> <ns>/<name>` for messages. */
export function rowSubject(r: { kind: string; namespace: string; name: string }): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

/** A listener's ResolvedRefs reasons that mean its TLS certificate is not resolved (Gateway API's listener reasons). */
const CERTIFICATE_REASONS = new Set(['InvalidCertificateRef', 'RefNotPermitted']);

/**
 * One line per row that is not ok, for the summary and for `problems`/`warnings` in the JSON. A Gateway listener whose
 * certificate does not resolve says so, with the explain command that prints its fix (a missing ReferenceGrant).
 */
export function describeRow(r: ConditionRow): string {
  if (r.reason === 'NoStatus') return `${rowSubject(r)}: ${r.message}`;
  const gen = r.stale ? ` (status of generation ${r.observedGeneration}, object at ${r.generation})` : '';
  const line = `${rowSubject(r)} ${r.target ? `[${r.target}] ` : ''}${r.type}=${r.status} ${r.reason}${gen}: ${r.message}`;
  if (
    r.kind === 'Gateway' &&
    r.target.startsWith('listener/') &&
    r.type === 'ResolvedRefs' &&
    CERTIFICATE_REASONS.has(r.reason)
  ) {
    const listener = r.target.slice('listener/'.length);
    return `certificate not resolved: ${line} (npm run explain -- gateway/${r.name}/${listener} -n ${r.namespace})`;
  }
  return line;
}

export function describeProxy(r: ProxyRow): string {
  if (r.status === 'NACKED') {
    const n = r.lastNack;
    return `proxy ${r.node} (Gateway ${r.gateway}) NACKed ${r.type} version ${n?.version ?? r.sent ?? '?'}: ${n?.detail ?? 'no detail'}`;
  }
  return `proxy ${r.node} (Gateway ${r.gateway}) ${r.type}: ${r.status} (sent ${r.sent ?? '-'}, acked ${r.acked ?? '-'})`;
}
