// The control plane's policy attachment decision, as explain sees it. The world's TrafficPolicies are validated and
// normalized by the control plane's own code (ir/policies.ts, ir/extensions.ts for ext auth), and for each place a
// route of the scope is served (Gateway, listener, route, named rule) system/controlplane/ir/attach-policies.ts
// decides which policies reach it and which one wins each field, by which rule, and which merge (mergeType). This
// module only gathers the places and sums the decisions up per policy and field; it decides nothing itself.
import {
  type AttachLevel,
  type AttachPoint,
  attachPolicies,
  type FieldDecision,
} from '../../../system/controlplane/ir/attach-policies.ts';
import { buildExtensionInfo } from '../../../system/controlplane/ir/extensions.ts';
import { intersectHostnames } from '../../../system/controlplane/ir/hostnames.ts';
import { buildPolicyInfo, type PolicyInfo } from '../../../system/controlplane/ir/policies.ts';
import type { GatewayExtension, ReferenceGrant, Service, TrafficPolicy } from '../../../system/controlplane/model.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { CONTROLLER_NAME } from '../proxies.ts';
import { routeParents } from './gateways.ts';
import { cond, created, type FieldDecisionSummary, find } from './report.ts';
import { type GatewayKey, keyOf, type World } from './world.ts';

/** Where an explanation looks: one route on one of its Gateways, or (no route) every accepted route of a Gateway. */
export interface ScopeEntry {
  gateway: GatewayKey;
  route?: KObj;
}

export interface AttachmentSummary {
  /** How the policy reaches the scope: `targetRef HTTPRoute web`, `selector Gateway tier=edge (app/gw)`, ... */
  via: string[];
  /** Per field the policy supplies, what the rules decided over the scope. */
  fields: FieldDecisionSummary[];
}

/** Policies as the control plane normalizes them (validation mode as the control plane's Deployment sets it). */
const infoCache = new WeakMap<World, Map<string, PolicyInfo>>();
export function policyInfos(world: World): Map<string, PolicyInfo> {
  let m = infoCache.get(world);
  if (m) return m;
  const routeWorld = {
    service: (ns: string, name: string) => (world.services[`${ns}/${name}`] ?? undefined) as Service | undefined,
    referenceGrants: (ns: string) =>
      world.grants.filter((g) => g.metadata?.namespace === ns) as unknown as ReferenceGrant[],
  };
  const policyWorld = {
    // Services and ReferenceGrants: a jwt provider's remote JWKS resolves here as in the control plane.
    ...routeWorld,
    extension: (ns: string, name: string) => {
      const e = find(world.extensions, ns, name);
      return e ? buildExtensionInfo(e as unknown as GatewayExtension, routeWorld) : undefined;
    },
  };
  m = new Map();
  for (const p of world.policies) {
    // The API returns creationTimestamp as a Date; the control plane compares RFC 3339 strings.
    const tp = { ...p, metadata: { ...p.metadata, creationTimestamp: created(p) } } as unknown as TrafficPolicy;
    m.set(keyOf(p), buildPolicyInfo(tp, policyWorld, world.validation ?? 'strict'));
  }
  infoCache.set(world, m);
  return m;
}

/** Is the route Accepted by this Gateway, by its status (the control plane places only accepted routes)? */
function acceptedBy(route: KObj, g: GatewayKey): boolean {
  const ns = route.metadata!.namespace!;
  return (route.status?.parents ?? []).some(
    (s: any) =>
      s.controllerName === CONTROLLER_NAME &&
      s.parentRef?.name === g.name &&
      (s.parentRef?.namespace ?? ns) === g.namespace &&
      cond(s.conditions, 'Accepted')?.status === 'True',
  );
}

/** The listeners of `gw` a route's parentRefs to it can attach to: sectionName, port, then hostname intersection. */
function listenersFor(gw: KObj | undefined, g: GatewayKey, route: KObj): (string | undefined)[] {
  const listeners: any[] = gw?.spec?.listeners ?? [];
  const ns = route.metadata!.namespace!;
  const names = new Set<string>();
  for (const p of route.spec?.parentRefs ?? []) {
    if ((p.kind ?? 'Gateway') !== 'Gateway' || p.name !== g.name || (p.namespace ?? ns) !== g.namespace) continue;
    for (const l of listeners) {
      if (p.sectionName !== undefined && l.name !== p.sectionName) continue;
      if (p.port !== undefined && l.port !== p.port) continue;
      if (!intersectHostnames(l.hostname, route.spec?.hostnames ?? []).length) continue;
      names.add(l.name);
    }
  }
  return names.size ? [...names] : [undefined];
}

/** The places of the scope: per route, each (listener, rule name) it can be served at. */
export function placesOf(world: World, scope: ScopeEntry[]): { route: string; at: AttachPoint }[] {
  const out: { route: string; at: AttachPoint }[] = [];
  const seen = new Set<string>();
  for (const s of scope) {
    const gw = find(world.gateways, s.gateway.namespace, s.gateway.name);
    const gateway = { ...s.gateway, labels: gw?.metadata?.labels ?? {} };
    const routes = s.route
      ? [s.route]
      : world.routes.filter(
          (r) =>
            routeParents(r).some((p) => p.namespace === s.gateway.namespace && p.name === s.gateway.name) &&
            acceptedBy(r, s.gateway),
        );
    for (const r of routes) {
      const route = { namespace: r.metadata!.namespace!, name: r.metadata!.name!, labels: r.metadata?.labels ?? {} };
      const rules: (string | undefined)[] = [
        ...new Set<string | undefined>((r.spec?.rules ?? []).map((x: any) => x.name)),
      ];
      for (const listener of listenersFor(gw, s.gateway, r)) {
        for (const rule of rules.length ? rules : [undefined]) {
          const k = `${gateway.namespace}/${gateway.name}|${listener}|${keyOf(r)}|${rule}`;
          if (seen.has(k)) continue;
          seen.add(k);
          const at: AttachPoint = {
            gateway,
            route,
            ...(listener !== undefined ? { listener } : {}),
            ...(rule !== undefined ? { rule } : {}),
          };
          out.push({ route: keyOf(r), at });
        }
      }
    }
  }
  return out;
}

const labelsText = (l: Record<string, string>) =>
  Object.entries(l)
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '(any)';

/** The control plane's decision for every policy that reaches the scope: how it reaches it and, per field, who wins where. */
export function attachmentsOver(world: World, scope: ScopeEntry[]): Map<string, AttachmentSummary> {
  // Each policy of an explanation asks about the same scope: decide once per world and scope.
  const key = scope.map((s) => `${s.gateway.namespace}/${s.gateway.name}|${s.route ? keyOf(s.route) : '*'}`).join(',');
  let memo = overCache.get(world);
  if (!memo) {
    memo = new Map();
    overCache.set(world, memo);
  }
  let out = memo.get(key);
  if (!out) {
    out = decideOver(world, scope);
    memo.set(key, out);
  }
  return out;
}

const overCache = new WeakMap<World, Map<string, Map<string, AttachmentSummary>>>();

function decideOver(world: World, scope: ScopeEntry[]): Map<string, AttachmentSummary> {
  const infos = policyInfos(world);
  const all = [...infos.values()];
  const acc = new Map<string, Acc>();
  for (const { route, at } of placesOf(world, scope)) {
    const d = attachPolicies(at, all);
    for (const c of d.candidates) {
      const a = acc.get(c.policy.key) ?? { via: new Set(), fields: new Map() };
      acc.set(c.policy.key, a);
      a.via.add(viaText(c.policy, c.level, c.by, at));
    }
    for (const f of d.fields) summarize(acc, f, d.provenance[f.field]!, route);
  }
  const out = new Map<string, AttachmentSummary>();
  for (const [key, a] of acc) {
    out.set(key, {
      via: [...a.via],
      fields: [...a.fields].map(([field, e]) => ({
        field,
        wonOn: [...e.won],
        lostTo: [...e.lost.values()],
        ...(e.merges.size
          ? { merges: [...e.merges].map(([policies, routes]) => ({ policies, routes: [...routes] })) }
          : {}),
        ...(e.refused ? { mergeRefused: e.refused } : {}),
      })),
    });
  }
  return out;
}

type FieldAcc = { won: Set<string>; lost: Map<string, LostTo>; merges: Map<string, Set<string>>; refused?: string };
type Acc = { via: Set<string>; fields: Map<string, FieldAcc> };

/** One field's decision at one place of `route`, added to each policy's summary as the decision states it. */
function summarize(acc: Map<string, Acc>, f: FieldDecision, provenance: string, route: string): void {
  const entry = (key: string): FieldAcc => {
    const a = acc.get(key)!;
    const e: FieldAcc = a.fields.get(f.field) ?? {
      won: new Set<string>(),
      lost: new Map<string, LostTo>(),
      merges: new Map(),
    };
    a.fields.set(f.field, e);
    return e;
  };
  const w = entry(keyOfName(f.winner));
  w.won.add(route);
  if (f.mergeRefused) w.refused = f.mergeRefused;
  if (provenance.includes('+')) {
    const routes = w.merges.get(provenance) ?? new Set<string>();
    routes.add(route);
    w.merges.set(provenance, routes);
  }
  for (const o of f.over) {
    // Merged under the winner; or left out by the last policy of the merge (`to`), the winner when none merged.
    const to = o.rule === 'merged' ? f.winner : (o.to ?? f.winner);
    const level = to === f.winner ? f.level : f.over.find((x) => x.policy === to)!.level;
    const lost = entry(keyOfName(o.policy)).lost;
    const k = `${to}|${o.rule === 'merged' ? 'merged' : ''}`;
    const l = lost.get(k) ?? {
      winner: to,
      rule: o.rule,
      level,
      routes: [],
      ...(o.mergeType ? { mergeType: o.mergeType } : {}),
    };
    if (!l.routes.includes(route)) l.routes.push(route);
    lost.set(k, l);
  }
}

type LostTo = FieldDecisionSummary['lostTo'][number];

/** `TrafficPolicy/<ns>/<name>` → `<ns>/<name>` */
const keyOfName = (n: string) => n.split('/').slice(1).join('/');

function viaText(p: PolicyInfo, level: AttachLevel, by: 'targetRef' | 'selector', at: AttachPoint): string {
  const gw = `${at.gateway?.namespace}/${at.gateway?.name}`;
  if (by === 'selector') {
    const kind = level === 'gateway' ? 'Gateway' : 'HTTPRoute';
    const sels = p.selectors.filter((s) => s.kind === kind).map((s) => labelsText(s.matchLabels));
    return level === 'gateway'
      ? `selector Gateway ${sels.join(' | ')} (${gw})`
      : `selector HTTPRoute ${sels.join(' | ')}`;
  }
  switch (level) {
    case 'gateway':
      return `targetRef Gateway ${gw}`;
    case 'listener':
      return `targetRef Gateway ${gw} section ${at.listener}`;
    case 'route':
      return `targetRef HTTPRoute ${at.route!.name}`;
    case 'rule':
      return `targetRef HTTPRoute ${at.route!.name} section ${at.rule}`;
  }
}
