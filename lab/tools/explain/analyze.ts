// The reasoning of `explain`, as pure functions of a World (world.ts). Verdicts about what is applied come from the
// proxies' config_dump — each route names, per setting, the policy that supplied it (provenance filter_metadata) —
// never from statuses; statuses are read to say what the control plane claims, and where the two disagree the
// report says so. Causes follow the contract's section 7: (1) a selector that matches nothing, (2) an older policy
// that wins, (3) a missing ReferenceGrant; plus routes that are not accepted or do not resolve, proxies that do not
// run, and configuration a proxy rejected. This module holds the entry point per kind; gateways.ts, routes.ts and
// policies.ts the reasoning about each.
import { extensionBackendRefs, policyExtensionRefs } from '../../../system/controlplane/model.ts';

/** Whether a TrafficPolicy names the GatewayExtension `name` (any field: model.ts policyExtensionRefs). */
const namesExtension = (p: KObj, name: string) => policyExtensionRefs(p.spec).some((r) => r.name === name);

import { notReadyReasons } from '../../toolkit/describe.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import type { ScopeEntry } from './attachment.ts';
import { gatewayFindings, routeParents } from './gateways.ts';
import { l4RouteFindings } from './l4-routes.ts';
import { explainListenerPolicy, explainListenerPolicyOn, listenerPolicyGateways } from './listener-policies.ts';
import {
  created,
  explainPolicyOn,
  extensionBackendFinding,
  policiesForRoute,
  policyFields,
  policyStatus,
  resolveTargets,
  selectorEvidence,
  statusDisagreements,
} from './policies.ts';
import { condText, type Finding, find, type PolicyReport, type Report, subjectOf, type Target } from './report.ts';
import { routeFindings } from './routes.ts';
import { type GatewayKey, keyOf, type World } from './world.ts';

export { gatewayFindings, routeParents } from './gateways.ts';

import { backendConfigGateways, explainBackendConfigFindings } from './backend-config.ts';

export { type ExplainKind, type Finding, KINDS, type PolicyReport, type Report, type Target } from './report.ts';

/** The Gateways whose proxies an explanation of `t` must read (explain.ts gathers exactly these). */
export function gatewaysNeeded(world: Omit<World, 'proxies' | 'services' | 'xdsError'>, t: Target): GatewayKey[] {
  const out = new Map<string, GatewayKey>();
  const addGw = (g: GatewayKey) => out.set(`${g.namespace}/${g.name}`, g);
  const addRoute = (r: KObj) => {
    for (const g of routeParents(r)) addGw(g);
  };
  const w = world as World;
  if (t.kind === 'HTTPRoute' || t.kind === 'GRPCRoute') {
    const r = find(t.kind === 'HTTPRoute' ? world.routes : (world.grpcRoutes ?? []), t.namespace, t.name);
    if (r) addRoute(r);
  } else if (t.kind === 'TCPRoute' || t.kind === 'UDPRoute' || t.kind === 'TLSRoute') {
    const r = findL4(world, t);
    if (r) addRoute(r);
  } else if (t.kind === 'Gateway') {
    addGw(t);
  } else if (t.kind === 'BackendConfigPolicy') {
    for (const g of backendConfigGateways(find(w.backendConfigPolicies ?? [], t.namespace, t.name))) addGw(g);
  } else if (t.kind === 'ListenerPolicy') {
    const p = find(world.listenerPolicies ?? [], t.namespace, t.name);
    if (p) for (const g of listenerPolicyGateways(p)) addGw(g);
  } else if (t.kind === 'TrafficPolicy') {
    const p = find(world.policies, t.namespace, t.name);
    if (p) {
      const tg = resolveTargets(w, p);
      tg.routes.forEach(addRoute);
      for (const g of tg.gateways) addGw({ namespace: g.metadata!.namespace!, name: g.metadata!.name! });
    }
  } else {
    for (const p of world.policies) {
      if (p.metadata?.namespace !== t.namespace || !namesExtension(p, t.name)) continue;
      const tg = resolveTargets(w, p);
      tg.routes.forEach(addRoute);
      for (const g of tg.gateways) addGw({ namespace: g.metadata!.namespace!, name: g.metadata!.name! });
    }
  }
  return [...out.values()];
}

/** Services whose existence matters to the explanation (ext-auth backends of the extensions involved). */
export function servicesNeeded(world: Omit<World, 'proxies' | 'services' | 'xdsError'>, t: Target): string[] {
  const exts: KObj[] = [];
  if (t.kind === 'GatewayExtension') {
    const e = find(world.extensions, t.namespace, t.name);
    if (e) exts.push(e);
  } else {
    for (const p of world.policies) {
      for (const ref of policyExtensionRefs(p.spec)) {
        const e = find(world.extensions, p.metadata!.namespace!, ref.name);
        if (e) exts.push(e);
      }
    }
  }
  return exts.flatMap((e) => {
    return extensionBackendRefs(e.spec).map(({ ref: b }) => `${b.namespace ?? e.metadata!.namespace}/${b.name}`);
  });
}

function proxiesOf(world: World): Report['proxies'] {
  return Object.entries(world.proxies).map(([gateway, v]) => ({
    gateway,
    pods: v.pods.map((p) => ({
      pod: p.pod,
      ready: p.ready,
      state: p.ready ? 'Running' : notReadyReasons(p.summary).join('; ') || p.summary.phase,
      configRead: !!p.dump,
    })),
  }));
}

function finish(world: World, t: Target, findings: Finding[], policies: PolicyReport[]): Report {
  if (world.xdsError) {
    findings.push({
      level: 'note',
      subject: 'control plane',
      message: `its /snapshots/xds could not be read (${world.xdsError}): NACKs are judged from config_dump only`,
    });
  }
  // One finding once, even when several routes or policies lead to it (a Gateway shared by two parents).
  const seen = new Set<string>();
  const unique = findings.filter((f) => {
    const k = `${f.level}|${f.subject}|${f.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return {
    target: t,
    found: true,
    healthy: !unique.some((f) => f.level === 'problem'),
    findings: unique,
    policies,
    proxies: proxiesOf(world),
  };
}

function notFound(t: Target, world: World): Report {
  const lists: Record<Target['kind'], KObj[]> = {
    HTTPRoute: world.routes,
    GRPCRoute: world.grpcRoutes ?? [],
    TCPRoute: (world.l4Routes ?? []).filter((r) => r.kind === 'TCPRoute'),
    UDPRoute: (world.l4Routes ?? []).filter((r) => r.kind === 'UDPRoute'),
    TLSRoute: (world.l4Routes ?? []).filter((r) => r.kind === 'TLSRoute'),
    Gateway: world.gateways,
    TrafficPolicy: world.policies,
    GatewayExtension: world.extensions,
    BackendConfigPolicy: world.backendConfigPolicies ?? [],
    ListenerPolicy: world.listenerPolicies ?? [],
  };
  const list = lists[t.kind];
  const there = list.filter((o) => o.metadata?.namespace === t.namespace).map((o) => o.metadata!.name!);
  return {
    target: t,
    found: false,
    healthy: false,
    findings: [
      {
        level: 'problem',
        subject: subjectOf(t.kind, t),
        message: `${t.kind} ${t.namespace}/${t.name} does not exist`,
        details: [
          there.length ? `${t.kind}s in ${t.namespace}: ${there.join(', ')}` : `no ${t.kind} in ${t.namespace}`,
        ],
      },
    ],
    policies: [],
    proxies: [],
  };
}

/** Where a policy's targets are served: each targeted route on each of its Gateways, every route of a targeted Gateway. */
function scopeOf(tg: { routes: KObj[]; gateways: KObj[] }): ScopeEntry[] {
  return [
    ...tg.routes.flatMap((r) => routeParents(r).map((g) => ({ gateway: g, route: r }))),
    ...tg.gateways.map((g) => ({ gateway: { namespace: g.metadata!.namespace!, name: g.metadata!.name! } })),
  ];
}

export function explainRoute(world: World, t: Target): Report {
  const route = find(world.routes, t.namespace, t.name);
  if (!route) return notFound(t, world);
  const findings = routeFindings(world, route);
  for (const g of routeParents(route, { withListener: true })) findings.push(...gatewayFindings(world, g));
  const policies: PolicyReport[] = [];
  const scope = routeParents(route).map((g) => ({ gateway: g, route }));
  for (const a of policiesForRoute(world, route)) {
    const r = explainPolicyOn(world, a, scope);
    policies.push(r.report);
    findings.push(...r.findings);
  }
  // Rule 1 seen from the route: a policy in its namespace whose selectors attach it to nothing at all was most
  // likely meant for a route here.
  for (const p of world.policies) {
    if (p.metadata?.namespace !== t.namespace || !(p.spec?.targetSelectors ?? []).length) continue;
    if (policies.some((r) => r.policy === keyOf(p))) continue;
    const tg = resolveTargets(world, p);
    if (tg.routes.length || tg.gateways.length) continue;
    policies.push({
      policy: keyOf(p),
      created: created(p),
      via: ['(none: its selectors match nothing)'],
      status: policyStatus(p),
      fields: policyFields(p),
      applied: [],
      notApplied: policyFields(p),
      verdict: 'not applied',
    });
    // A selector that wants a label key this route has, with another value, was most likely meant for it (a typo or
    // a stale label): a problem of this route. Otherwise it is only worth a note.
    const nearMiss = (p.spec?.targetSelectors ?? []).some(
      (s: any) =>
        s.kind === 'HTTPRoute' &&
        Object.keys(s.matchLabels ?? {}).some((k) => route.metadata?.labels?.[k] !== undefined),
    );
    findings.push({
      level: nearMiss ? 'problem' : 'note',
      rule: 1,
      subject: subjectOf('TrafficPolicy', { namespace: t.namespace, name: p.metadata!.name! }),
      message: nearMiss
        ? `its label selector nearly matches this route, but matches no HTTPRoute and no Gateway: it attaches nothing`
        : `a policy in this namespace whose label selectors match no HTTPRoute and no Gateway: it attaches nothing`,
      details: [...selectorEvidence(world, p), ...tg.unresolved],
    });
  }
  return finish(world, t, findings, policies);
}

export function explainGateway(world: World, t: Target): Report {
  const gw = find(world.gateways, t.namespace, t.name);
  if (!gw) return notFound(t, world);
  const findings = gatewayFindings(world, t, { explained: true });
  const routes = world.routes.filter((r) =>
    routeParents(r).some((g) => g.namespace === t.namespace && g.name === t.name),
  );
  for (const r of routes) {
    for (const f of routeFindings(world, r)) {
      // From the Gateway's point of view only its own parent entry counts.
      if (f.level === 'problem' || f.disagreement) findings.push(f);
    }
  }
  if (routes.length) {
    findings.push({
      level: 'ok',
      subject: subjectOf('Gateway', t),
      message: `${routes.length} HTTPRoute(s) name it as parent: ${routes.map(keyOf).join(', ')}`,
    });
  }
  const policies: PolicyReport[] = [];
  for (const p of world.policies) {
    const tg = resolveTargets(world, p);
    if (!tg.gateways.some((g) => keyOf(g) === `${t.namespace}/${t.name}`)) continue;
    const r = explainPolicyOn(world, { policy: p, via: [`Gateway ${t.namespace}/${t.name}`] }, [{ gateway: t }]);
    policies.push(r.report);
    findings.push(...r.findings);
  }
  for (const p of world.listenerPolicies ?? []) {
    if (!listenerPolicyGateways(p).some((g) => g.namespace === t.namespace && g.name === t.name)) continue;
    const r = explainListenerPolicyOn(world, p);
    policies.push(r.report);
    findings.push(...r.findings.filter((f) => f.level !== 'problem' || !f.subject.startsWith('Gateway ')));
  }
  return finish(world, t, findings, policies);
}

export function explainPolicy(world: World, t: Target): Report {
  const p = find(world.policies, t.namespace, t.name);
  if (!p) return notFound(t, world);
  const subject = subjectOf('TrafficPolicy', t);
  const findings: Finding[] = [];
  const tg = resolveTargets(world, p);
  if (!tg.routes.length && !tg.gateways.length) {
    const hasSelectors = (p.spec?.targetSelectors ?? []).length > 0;
    findings.push({
      level: 'problem',
      rule: hasSelectors ? 1 : undefined,
      subject,
      message: hasSelectors
        ? 'its label selectors match no HTTPRoute and no Gateway, so it attaches nothing'
        : 'its targetRefs name nothing that exists, so it attaches nothing',
      details: [...selectorEvidence(world, p), ...tg.unresolved],
    });
    const status = policyStatus(p);
    const report: PolicyReport = {
      policy: keyOf(p),
      created: created(p),
      via: [],
      status,
      fields: policyFields(p),
      applied: [],
      notApplied: policyFields(p),
      verdict: 'not applied',
    };
    findings.push(...statusDisagreements(subject, status, 'not applied'));
    return finish(world, t, findings, [report]);
  }
  for (const u of tg.unresolved) findings.push({ level: 'note', subject, message: u });
  const scope = scopeOf(tg);
  const via = [...tg.routes.map((r) => `HTTPRoute ${keyOf(r)}`), ...tg.gateways.map((g) => `Gateway ${keyOf(g)}`)];
  const r = explainPolicyOn(world, { policy: p, via }, scope);
  findings.push(...r.findings);
  // Why a target's proxies may hold nothing at all: routes not accepted, pods not running, NACKs.
  for (const route of tg.routes) {
    findings.push(...routeFindings(world, route).filter((f) => f.level === 'problem'));
  }
  for (const s of new Map(scope.map((x) => [`${x.gateway.namespace}/${x.gateway.name}`, x.gateway])).values()) {
    findings.push(...gatewayFindings(world, s, { listeners: false }).filter((f) => f.level === 'problem'));
  }
  return finish(world, t, findings, [r.report]);
}

export function explainExtension(world: World, t: Target): Report {
  const ext = find(world.extensions, t.namespace, t.name);
  if (!ext) return notFound(t, world);
  const subject = subjectOf('GatewayExtension', t);
  const findings: Finding[] = [];
  for (const c of (ext.status?.conditions ?? []) as Condition[]) {
    if (c.status === 'False')
      findings.push({ level: 'note', subject, message: `status: ${condText(c)}: ${c.message ?? ''}` });
  }
  const backend = extensionBackendFinding(world, ext);
  if (backend) findings.push(backend);
  else findings.push({ level: 'ok', subject, message: 'its backend Service resolves' });
  const policies: PolicyReport[] = [];
  const users = world.policies.filter((p) => p.metadata?.namespace === t.namespace && namesExtension(p, t.name));
  if (!users.length) {
    findings.push({
      level: 'note',
      subject,
      message:
        'no TrafficPolicy in its namespace uses it (spec.extAuth.extensionRef, spec.rateLimit.global.extensionRef, spec.extProc.extensionRef)',
    });
  }
  for (const p of users) {
    const tg = resolveTargets(world, p);
    const scope = scopeOf(tg);
    const via = policyExtensionRefs(p.spec)
      .filter((r) => r.name === t.name)
      .map((r) => `${r.path} ${t.name}`);
    const r = explainPolicyOn(world, { policy: p, via }, scope);
    policies.push(r.report);
    // The backend finding above already carries rule 3 and the YAML; the policy's own copy would repeat it.
    findings.push(
      ...r.findings.filter((f) => f.rule !== 3 && !/^\w+ is not applied: GatewayExtension/.test(f.message)),
    );
  }
  return finish(world, t, findings, policies);
}

/** A TCPRoute, UDPRoute or TLSRoute of the world, by kind, namespace and name. */
function findL4(world: Pick<World, 'l4Routes'>, t: Target): KObj | undefined {
  return (world.l4Routes ?? []).find(
    (r) => r.kind === t.kind && r.metadata?.namespace === t.namespace && r.metadata?.name === t.name,
  );
}

/** A TCPRoute, UDPRoute or TLSRoute: its parents and backends, whether its Gateways' proxies hold it, and those Gateways. */
function explainL4Route(world: World, t: Target): Report {
  const route = findL4(world, t);
  if (!route) return notFound(t, world);
  const findings = l4RouteFindings(world, route);
  for (const g of routeParents(route, { withListener: true })) findings.push(...gatewayFindings(world, g));
  return finish(world, t, findings, []);
}

/** A GRPCRoute: its parents and backends and whether its Gateways' proxies hold it (TrafficPolicies target HTTPRoutes). */
function explainGrpcRoute(world: World, t: Target): Report {
  const route = find(world.grpcRoutes ?? [], t.namespace, t.name);
  if (!route) return notFound(t, world);
  const findings = routeFindings(world, route);
  for (const g of routeParents(route)) findings.push(...gatewayFindings(world, g));
  return finish(world, t, findings, []);
}

export function explain(world: World, t: Target): Report {
  switch (t.kind) {
    case 'HTTPRoute':
      return explainRoute(world, t);
    case 'GRPCRoute':
      return explainGrpcRoute(world, t);
    case 'TCPRoute':
    case 'UDPRoute':
    case 'TLSRoute':
      return explainL4Route(world, t);
    case 'Gateway':
      return explainGateway(world, t);
    case 'TrafficPolicy':
      return explainPolicy(world, t);
    case 'GatewayExtension':
      return explainExtension(world, t);
    case 'BackendConfigPolicy': {
      const findings = explainBackendConfigFindings(world, t);
      return findings ? finish(world, t, findings, []) : notFound(t, world);
    }
    case 'ListenerPolicy': {
      const r = explainListenerPolicy(world, t);
      return r.found ? finish(world, t, r.findings, r.policies) : notFound(t, world);
    }
  }
}
