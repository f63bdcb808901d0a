// One Gateway → its IR and the reports its statuses are made from: listeners validated and grouped by port, routes
// attached per Gateway API rules (parentRef section/port, allowedRoutes, hostname intersection), virtual hosts per
// hostname with routes in the spec's precedence order, and TrafficPolicies merged per route.
import {
  GATEWAY_GROUP,
  type Gateway,
  type GatewayClass,
  type GatewayParameters,
  type Listener,
  matchesLabels,
  type Namespace,
  type ParentRef,
  type PolicyField,
  roleOf,
  VENDOR_GROUP,
} from '../model.ts';
import { type AttachPoint, type Candidate, candidatesAt, mergePolicies } from './attach-policies.ts';
import { intersectHostnames, virtualHostName } from './hostnames.ts';
import type { PolicyInfo } from './policies.ts';
import type { NormalizedParentRef, RouteInfo } from './routes.ts';
import type {
  ClusterIR,
  ExtAuthIR,
  Finding,
  GatewayIR,
  ListenerIR,
  ObjRef,
  Outcome,
  RouteEntryIR,
  RouteIR,
  ValidationMode,
  VirtualHostIR,
} from './types.ts';

export interface GatewayWorld {
  gatewayClass(name: string): GatewayClass | undefined;
  gatewayParameters(namespace: string, name: string): GatewayParameters | undefined;
  /** Routes whose parentRefs name this Gateway. */
  routes(gatewayKey: string): RouteInfo[];
  namespace(name: string): Namespace | undefined;
  /** Policies with a targetRef `<kind>/<ns>/<name>`. */
  policiesTargeting(kind: 'Gateway' | 'HTTPRoute', namespace: string, name: string): PolicyInfo[];
  /** Policies with a targetSelector for `kind` in `namespace`. */
  policiesSelecting(kind: 'Gateway' | 'HTTPRoute', namespace: string): PolicyInfo[];
}

export interface ListenerReport {
  name: string;
  port: number;
  supportedKinds: { group: string; kind: string }[];
  attachedRoutes: number;
  accepted: Outcome;
  programmed: Outcome;
  resolvedRefs: Outcome;
  conflicted: Outcome;
}

export interface RouteParentReport {
  parentRef: ParentRef;
  accepted: Outcome;
  resolvedRefs: Outcome;
  partiallyInvalid?: Outcome;
}

export interface PolicyAncestorReport {
  accepted: Outcome;
  attached: Outcome;
  resolvedRefs?: Outcome;
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

const HTTP_ROUTE_KIND = { group: GATEWAY_GROUP, kind: 'HTTPRoute' };
const ok = (reason: string, message: string): Outcome => ({ ok: true, reason, message });
const bad = (reason: string, message: string): Outcome => ({ ok: false, reason, message });

/** Is this Gateway ours? Its class must exist and name our controller. */
export function isOurGateway(gw: Gateway, cls: GatewayClass | undefined, controllerName: string): boolean {
  return !!cls && cls.spec?.controllerName === controllerName && !cls.metadata.deletionTimestamp && !!gw.spec;
}

interface ListenerState {
  l: Listener;
  report: ListenerReport;
  usable: boolean;
  kindsOk: boolean;
}

function validateListeners(gw: Gateway): ListenerState[] {
  const listeners = gw.spec?.listeners ?? [];
  const states: ListenerState[] = listeners.map((l) => {
    const http = l.protocol === 'HTTP';
    let supportedKinds = http ? [HTTP_ROUTE_KIND] : [];
    let resolvedRefs = ok('ResolvedRefs', 'route kinds resolved');
    let kindsOk = http;
    const kinds = l.allowedRoutes?.kinds;
    if (http && kinds?.length) {
      const valid = kinds.filter((k) => (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === 'HTTPRoute');
      const invalid = kinds.filter((k) => !valid.includes(k));
      supportedKinds = valid.length ? [HTTP_ROUTE_KIND] : [];
      kindsOk = valid.length > 0;
      if (invalid.length) {
        resolvedRefs = bad(
          'InvalidRouteKinds',
          `unsupported route kinds: ${invalid.map((k) => `${k.group ?? GATEWAY_GROUP}/${k.kind}`).join(', ')} (supported: HTTPRoute)`,
        );
      }
    }
    const accepted = http
      ? ok('Accepted', 'listener accepted')
      : bad('UnsupportedProtocol', `protocol ${l.protocol} is not supported (supported: HTTP)`);
    return {
      l,
      kindsOk,
      usable: http,
      report: {
        name: l.name,
        port: l.port,
        supportedKinds,
        attachedRoutes: 0,
        accepted,
        programmed: ok('Programmed', 'listener programmed'),
        resolvedRefs,
        conflicted: ok('NoConflicts', 'no conflicts'),
      },
    };
  });
  // Listeners sharing a port must agree on the protocol and differ in hostname.
  const byPort = new Map<number, ListenerState[]>();
  for (const s of states) byPort.set(s.l.port, [...(byPort.get(s.l.port) ?? []), s]);
  for (const group of byPort.values()) {
    if (group.length < 2) continue;
    const protocols = new Set(group.map((s) => s.l.protocol));
    for (const s of group) {
      if (protocols.size > 1) {
        s.report.conflicted = bad(
          'ProtocolConflict',
          `port ${s.l.port} is used with protocols ${[...protocols].join(', ')}`,
        );
        continue;
      }
      const same = group.filter((o) => o !== s && (o.l.hostname ?? '') === (s.l.hostname ?? ''));
      if (same.length) {
        s.report.conflicted = bad(
          'HostnameConflict',
          `listeners ${[s, ...same].map((x) => x.l.name).join(', ')} share port ${s.l.port} and hostname ${s.l.hostname || '(any)'}`,
        );
      }
    }
  }
  for (const s of states) {
    // Conflicted is reported True when there IS a conflict: outcome.ok false means "conflicted".
    if (!s.report.conflicted.ok) s.usable = false;
    // A listener that admits no route kind serves nothing: it is not programmed (and gets no Envoy listener).
    if (!s.kindsOk) s.usable = false;
    if (!s.usable) {
      s.report.programmed = bad(
        'Invalid',
        !s.report.accepted.ok
          ? s.report.accepted.message
          : !s.report.conflicted.ok
            ? s.report.conflicted.message
            : s.report.resolvedRefs.message,
      );
    }
  }
  return states;
}

function namespaceAllowed(world: GatewayWorld, gw: Gateway, l: Listener, routeNs: string): boolean {
  const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'All') return true;
  if (from === 'Same') return routeNs === gw.metadata.namespace;
  const ns = world.namespace(routeNs);
  return !!ns && matchesLabels(ns.metadata.labels, l.allowedRoutes?.namespaces?.selector);
}

function parentMatchesGateway(p: NormalizedParentRef, gwNs: string, gwName: string): boolean {
  return p.group === GATEWAY_GROUP && p.kind === 'Gateway' && p.namespace === gwNs && p.name === gwName;
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

/** Spec precedence (HTTPRoute "matches"): Exact > RegularExpression > PathPrefix, longer paths first, then method,
 * more headers, more query params, then the older route, then namespace/name, then rule and match order. */
function comparePrecedence(a: { e: RouteEntryIR; r: RouteInfo }, b: { e: RouteEntryIR; r: RouteInfo }): number {
  const rank = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;
  const ma = a.e.matchIR;
  const mb = b.e.matchIR;
  return (
    rank[ma.path.type] - rank[mb.path.type] ||
    mb.path.value.length - ma.path.value.length ||
    Number(!!mb.method) - Number(!!ma.method) ||
    mb.headers.length - ma.headers.length ||
    mb.queryParams.length - ma.queryParams.length ||
    cmp(a.r.creationTimestamp, b.r.creationTimestamp) ||
    cmp(`${a.r.ref.namespace}/${a.r.ref.name}`, `${b.r.ref.namespace}/${b.r.ref.name}`) ||
    a.e.rule - b.e.rule ||
    a.e.match - b.e.match
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function buildGateway(gw: Gateway, world: GatewayWorld, opts: { mode: ValidationMode }): GatewayResult {
  const ns = gw.metadata.namespace ?? 'default';
  const name = gw.metadata.name;
  const key = `${ns}/${name}`;
  const gwRef: ObjRef = { kind: 'Gateway', namespace: ns, name };
  const listeners = validateListeners(gw);
  const { outcome: paramsOutcome, params } = parametersOutcome(gw, world);
  let accepted = paramsOutcome;
  if (accepted.ok && !listeners.some((s) => s.usable)) {
    accepted = bad('ListenersNotValid', 'no listener is valid (see status.listeners)');
  }
  if (!accepted.ok) {
    for (const s of listeners)
      if (s.report.programmed.ok)
        s.report.programmed = bad('Invalid', `the Gateway is not accepted: ${accepted.message}`);
  }

  const reports: GatewayReports = {
    gateway: gwRef,
    generation: gw.metadata.generation ?? 1,
    accepted,
    listeners: listeners.map((s) => s.report),
    routes: {},
    policies: {},
    ...(params ? { parameters: params } : {}),
  };

  // ---- routes → listeners -------------------------------------------------------------------------------------
  const routes = world
    .routes(key)
    .sort((a, b) => cmp(`${a.ref.namespace}/${a.ref.name}`, `${b.ref.namespace}/${b.ref.name}`));
  /** listener name → [route, hostnames] */
  const placements: { s: ListenerState; r: RouteInfo; hosts: string[] }[] = [];
  for (const r of routes) {
    const parents: RouteParentReport[] = [];
    const attachedTo = new Set<string>();
    for (const p of r.parentRefs) {
      if (!parentMatchesGateway(p, ns, name)) continue;
      const report: RouteParentReport = {
        parentRef: p.original,
        accepted: ok('Accepted', 'route accepted'),
        resolvedRefs: r.resolvedRefs,
      };
      parents.push(report);
      if (!accepted.ok) {
        report.accepted = bad('NoMatchingParent', `Gateway ${key} is not accepted: ${accepted.message}`);
        continue;
      }
      const candidates = listeners.filter(
        (s) =>
          (p.sectionName === undefined || s.l.name === p.sectionName) && (p.port === undefined || s.l.port === p.port),
      );
      if (!candidates.length) {
        const what = [
          p.sectionName !== undefined ? `sectionName ${p.sectionName}` : '',
          p.port !== undefined ? `port ${p.port}` : '',
        ]
          .filter(Boolean)
          .join(' and ');
        report.accepted = bad('NoMatchingParent', `Gateway ${key} has no listener with ${what}`);
        continue;
      }
      const allowed = candidates.filter(
        (s) => s.usable && s.kindsOk && namespaceAllowed(world, gw, s.l, r.ref.namespace),
      );
      if (!allowed.length) {
        report.accepted = bad(
          'NotAllowedByListeners',
          `listeners ${candidates.map((s) => s.l.name).join(', ')} of Gateway ${key} do not allow HTTPRoutes from namespace ${r.ref.namespace}`,
        );
        continue;
      }
      const matching = allowed
        .map((s) => ({ s, hosts: intersectHostnames(s.l.hostname, r.hostnames) }))
        .filter((x) => x.hosts.length);
      if (!matching.length) {
        report.accepted = bad(
          'NoMatchingListenerHostname',
          `no hostname of the route (${r.hostnames.join(', ')}) matches a listener hostname (${allowed.map((s) => s.l.hostname ?? '(any)').join(', ')})`,
        );
        continue;
      }
      if (r.ruleCount > 0 && r.droppedRules.length === r.ruleCount) {
        report.accepted = bad(
          'UnsupportedValue',
          `every rule is invalid: ${r.droppedRules.map((d) => d.message).join('; ')}`,
        );
        continue;
      }
      if (r.droppedRules.length) {
        report.partiallyInvalid = bad(
          'UnsupportedValue',
          `rules dropped: ${r.droppedRules.map((d) => `spec.rules[${d.rule}]: ${d.message}`).join('; ')}`,
        );
      }
      for (const m of matching) {
        if (attachedTo.has(m.s.l.name)) continue;
        attachedTo.add(m.s.l.name);
        placements.push({ s: m.s, r, hosts: m.hosts });
      }
    }
    if (parents.length) reports.routes[`${r.ref.namespace}/${r.ref.name}`] = { generation: r.generation, parents };
  }
  for (const pl of placements) pl.s.report.attachedRoutes++;

  if (!accepted.ok) return { key, reports };

  // ---- policies -----------------------------------------------------------------------------------------------
  // The indexes narrow the policies to those naming this Gateway or a route; attach-policies.ts decides the rest.
  const gwPoint: AttachPoint['gateway'] = { namespace: ns, name, labels: gw.metadata.labels };
  const gatewayReach = [...world.policiesTargeting('Gateway', ns, name), ...world.policiesSelecting('Gateway', ns)];
  // Candidates per listener (Gateway and listener level) and per route rule (route and rule level), each found once.
  const listenerCache = new Map<string, Candidate<PolicyInfo>[]>();
  const atListener = (listener: string) => {
    let c = listenerCache.get(listener);
    if (!c) {
      c = candidatesAt({ gateway: gwPoint, listener }, gatewayReach);
      listenerCache.set(listener, c);
    }
    return c;
  };
  const ruleCache = new Map<string, Candidate<PolicyInfo>[]>();
  const atRule = (r: RouteInfo, rule: string | undefined) => {
    const k = `${r.ref.namespace}/${r.ref.name}|${rule ?? ''}`;
    let c = ruleCache.get(k);
    if (!c) {
      const at: AttachPoint = {
        route: { namespace: r.ref.namespace, name: r.ref.name, labels: r.labels },
        ...(rule !== undefined ? { rule } : {}),
      };
      const reach = [
        ...world.policiesTargeting('HTTPRoute', r.ref.namespace, r.ref.name),
        ...world.policiesSelecting('HTTPRoute', r.ref.namespace),
      ];
      c = candidatesAt(at, reach);
      ruleCache.set(k, c);
    }
    return c;
  };

  /** Policies seen attached here, with what they won and lost over all routes. */
  const policyState = new Map<string, { p: PolicyInfo; won: Set<PolicyField>; lost: Map<PolicyField, Set<string>> }>();
  const touch = (p: PolicyInfo) => {
    let s = policyState.get(p.key);
    if (!s) {
      s = { p, won: new Set(), lost: new Map() };
      policyState.set(p.key, s);
    }
    return s;
  };
  for (const c of candidatesAt({ gateway: gwPoint }, gatewayReach)) touch(c.policy);
  for (const s of listeners) if (s.usable) for (const c of atListener(s.l.name)) touch(c.policy);

  // ---- virtual hosts --------------------------------------------------------------------------------------------
  const findings: Finding[] = [];
  const findingSeen = new Set<string>();
  const addFindings = (fs: Finding[]) => {
    for (const f of fs) {
      const k = `${f.resource.kind}/${f.resource.namespace}/${f.resource.name}/${f.field}`;
      if (!findingSeen.has(k)) {
        findingSeen.add(k);
        findings.push(f);
      }
    }
  };
  const ports = new Map<
    number,
    { names: string[]; hosts: Map<string, { e: RouteEntryIR; r: RouteInfo; listener: string }[]> }
  >();
  for (const s of listeners) {
    if (!s.usable) continue;
    let p = ports.get(s.l.port);
    if (!p) {
      p = { names: [], hosts: new Map() };
      ports.set(s.l.port, p);
    }
    p.names.push(s.l.name);
  }
  for (const pl of placements) {
    const port = ports.get(pl.s.l.port)!;
    addFindings(pl.r.findings);
    for (const h of pl.hosts) {
      let list = port.hosts.get(h);
      if (!list) {
        list = [];
        port.hosts.set(h, list);
      }
      for (const e of pl.r.entries) list.push({ e, r: pl.r, listener: pl.s.l.name });
    }
  }

  const clusters = new Map<string, ClusterIR>();
  const extAuth = new Map<string, ExtAuthIR>();
  const routeClusters = new Map<string, ClusterIR>();
  for (const r of routes) for (const c of r.clusters) routeClusters.set(c.name, c);

  const listenerIRs: ListenerIR[] = [];
  for (const [port, p] of [...ports].sort((a, b) => a[0] - b[0])) {
    const vhosts: VirtualHostIR[] = [];
    for (const [host, list] of [...p.hosts].sort((a, b) => hostOrder(a[0], b[0]))) {
      const seen = new Set<string>();
      const sorted = list.sort(comparePrecedence).filter((x) => {
        if (seen.has(x.e.name)) return false;
        seen.add(x.e.name);
        return true;
      });
      const routesIR: RouteIR[] = sorted.map(({ e, r, listener }) => {
        const candidates = [...atListener(listener), ...atRule(r, e.ruleName || undefined)];
        const merged = mergePolicies(candidates);
        for (const [pk, out] of merged.outcomes) {
          const st = touch(candidates.find((c) => c.policy.key === pk)!.policy);
          for (const f of out.won) st.won.add(f);
          for (const l of out.lost) {
            let w = st.lost.get(l.field);
            if (!w) {
              w = new Set();
              st.lost.set(l.field, w);
            }
            w.add(l.winner);
          }
        }
        for (const c of candidates) addFindings(c.policy.findings);
        if (e.action.type === 'forward') {
          for (const b of e.action.backends)
            if (routeClusters.has(b.cluster)) clusters.set(b.cluster, routeClusters.get(b.cluster)!);
        }
        for (const m of e.mirrors)
          if (routeClusters.has(m.cluster)) clusters.set(m.cluster, routeClusters.get(m.cluster)!);
        const ea = merged.settings.extAuth;
        if (ea && !ea.disabled) {
          extAuth.set(ea.ext.filterName, ea.ext);
          clusters.set(ea.ext.cluster.name, ea.ext.cluster);
        }
        return { ...e, policy: merged.settings, provenance: merged.provenance };
      });
      vhosts.push({ name: virtualHostName(port, host), domains: [host], routes: routesIR });
    }
    listenerIRs.push({ name: `listener~${port}`, port, gatewayListeners: p.names, virtualHosts: vhosts });
  }

  for (const [pk, st] of policyState) {
    const p = st.p;
    const lostFields = [...st.lost.keys()].filter((f) => !st.won.has(f));
    let attached: Outcome;
    if (p.extAuthRefs && !p.extAuthRefs.ok && !Object.keys(p.settings).some((f) => f !== 'extAuth')) {
      attached = bad(p.extAuthRefs.reason, p.extAuthRefs.message);
    } else if (!Object.keys(p.settings).length && !p.accepted.ok) {
      attached = bad('Invalid', `not applied: ${p.accepted.message}`);
    } else if (lostFields.length && !st.won.size) {
      attached = bad('Overridden', `overridden due to conflict with higher priority policy: ${describeLost(st.lost)}`);
    } else if (lostFields.length) {
      attached = ok(
        'Merged',
        `merged with higher priority policies: applied ${[...st.won].join(', ')}; overridden ${describeLost(new Map(lostFields.map((f) => [f, st.lost.get(f)!])))}`,
      );
    } else {
      attached = ok('Attached', st.won.size ? `applied ${[...st.won].join(', ')}` : 'attached');
    }
    const accepted: Outcome =
      p.accepted.ok || opts.mode === 'strict'
        ? p.accepted
        : ok('Valid', `not validated (validation is off), sent as written: ${p.accepted.message}`);
    reports.policies[pk] = {
      generation: p.generation,
      accepted,
      attached,
      ...(p.extAuthRefs
        ? { resolvedRefs: { ok: p.extAuthRefs.ok, reason: p.extAuthRefs.reason, message: p.extAuthRefs.message } }
        : {}),
    };
  }

  const ir: GatewayIR = {
    gateway: gwRef,
    role: roleOf(ns, name),
    validation: opts.mode,
    listeners: listenerIRs,
    clusters: [...clusters.values()].sort((a, b) => cmp(a.name, b.name)),
    extAuth: [...extAuth.values()].sort((a, b) => cmp(a.filterName, b.filterName)),
    findings,
  };
  return { key, ir, reports };
}

function describeLost(lost: Map<PolicyField, Set<string>>): string {
  return [...lost].map(([f, ws]) => `${f} by ${[...ws].join(', ')}`).join('; ');
}

/** Exact hostnames first (alphabetical), then wildcards by decreasing length, then `*`. */
function hostOrder(a: string, b: string): number {
  const wa = a === '*' ? 2 : a.startsWith('*.') ? 1 : 0;
  const wb = b === '*' ? 2 : b.startsWith('*.') ? 1 : 0;
  if (wa !== wb) return wa - wb;
  if (wa === 1 && a.length !== b.length) return b.length - a.length;
  return cmp(a, b);
}
