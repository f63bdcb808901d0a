// TrafficPolicies seen by explain: what reaches a route or Gateway (targetRefs and selectors, at route or Gateway
// level), what each one's settings became in the proxies' config_dump (by provenance), and the cause of each setting
// that is missing — rule 1 (selector), rule 2 (a winner named in provenance), rule 3 (a missing ReferenceGrant).
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import { POLICY_FIELDS, type ReferenceGrant } from '../../../system/controlplane/model.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import { configRoutes, dumpsRead, routeParents } from './gateways.ts';
import { referenceGrantYaml } from './refgrant-yaml.ts';
import {
  cond,
  condText,
  type Finding,
  find,
  labelsText,
  matches,
  type PolicyReport,
  subjectOf,
  VENDOR_GROUP,
} from './report.ts';
import { type GatewayKey, keyOf, type World } from './world.ts';

export interface Attachment {
  policy: KObj;
  via: string[];
}

export function policyFields(p: KObj): string[] {
  return POLICY_FIELDS.filter((f) => p.spec?.[f] !== undefined);
}

/** Policies that reach a route: by targetRef or selector on the route, or on one of its parent Gateways. */
export function policiesForRoute(world: World, route: KObj): Attachment[] {
  const ns = route.metadata!.namespace!;
  const name = route.metadata!.name!;
  const out = new Map<string, Attachment>();
  const add = (p: KObj, via: string) => {
    const k = keyOf(p);
    const a = out.get(k) ?? { policy: p, via: [] };
    a.via.push(via);
    out.set(k, a);
  };
  for (const p of world.policies) {
    const pns = p.metadata!.namespace!;
    for (const t of p.spec?.targetRefs ?? []) {
      if (pns === ns && t.kind === 'HTTPRoute' && t.name === name) {
        add(p, `targetRef HTTPRoute ${t.name}${t.sectionName ? ` section ${t.sectionName}` : ''}`);
      }
      for (const g of routeParents(route)) {
        if (pns === g.namespace && t.kind === 'Gateway' && t.name === g.name) {
          add(p, `targetRef Gateway ${g.namespace}/${g.name}${t.sectionName ? ` section ${t.sectionName}` : ''}`);
        }
      }
    }
    for (const s of p.spec?.targetSelectors ?? []) {
      if (pns === ns && s.kind === 'HTTPRoute' && matches(s.matchLabels ?? {}, route.metadata?.labels)) {
        add(p, `selector HTTPRoute ${labelsText(s.matchLabels)}`);
      }
      for (const g of routeParents(route)) {
        const gw = find(world.gateways, g.namespace, g.name);
        if (gw && pns === g.namespace && s.kind === 'Gateway' && matches(s.matchLabels ?? {}, gw.metadata?.labels)) {
          add(p, `selector Gateway ${labelsText(s.matchLabels)} (${g.namespace}/${g.name})`);
        }
      }
    }
  }
  return [...out.values()];
}

/** What a policy's targetRefs and selectors resolve to: routes and Gateways (in its own namespace). */
export function resolveTargets(world: World, p: KObj): { routes: KObj[]; gateways: KObj[]; unresolved: string[] } {
  const ns = p.metadata!.namespace!;
  const routes = new Map<string, KObj>();
  const gateways = new Map<string, KObj>();
  const unresolved: string[] = [];
  for (const t of p.spec?.targetRefs ?? []) {
    const list = t.kind === 'HTTPRoute' ? world.routes : t.kind === 'Gateway' ? world.gateways : [];
    const o = find(list, ns, t.name);
    if (!o) unresolved.push(`targetRef ${t.kind} ${ns}/${t.name} does not exist`);
    else (t.kind === 'HTTPRoute' ? routes : gateways).set(keyOf(o), o);
  }
  for (const s of p.spec?.targetSelectors ?? []) {
    const list = s.kind === 'HTTPRoute' ? world.routes : s.kind === 'Gateway' ? world.gateways : [];
    for (const o of list) {
      if (o.metadata?.namespace === ns && matches(s.matchLabels ?? {}, o.metadata?.labels)) {
        (s.kind === 'HTTPRoute' ? routes : gateways).set(keyOf(o), o);
      }
    }
  }
  return { routes: [...routes.values()], gateways: [...gateways.values()], unresolved };
}

/** Rule 1's evidence: the labels each selector wanted, and the labels the objects of its kind have there. */
export function selectorEvidence(world: World, p: KObj): string[] {
  const ns = p.metadata!.namespace!;
  const out: string[] = [];
  for (const s of p.spec?.targetSelectors ?? []) {
    const list = s.kind === 'HTTPRoute' ? world.routes : world.gateways;
    const there = list.filter((o) => o.metadata?.namespace === ns);
    out.push(`it selects ${s.kind}s in namespace ${ns} labelled ${labelsText(s.matchLabels)}`);
    if (!there.length) out.push(`  there is no ${s.kind} in namespace ${ns}`);
    for (const o of there.slice(0, 12))
      out.push(`  ${s.kind} ${o.metadata?.name} has ${labelsText(o.metadata?.labels)}`);
    if (there.length > 12) out.push(`  ... and ${there.length - 12} more`);
  }
  return out;
}

export function policyStatus(p: KObj): PolicyReport['status'] {
  const top: Condition[] = p.status?.conditions ?? [];
  const ancestors: any[] = p.status?.ancestors ?? [];
  const all = [...top, ...ancestors.flatMap((a) => a.conditions ?? [])];
  const attached = [
    ...ancestors.map((a) => cond(a.conditions, 'Attached')).filter((c): c is Condition => !!c),
    ...(ancestors.length ? [] : [cond(top, 'Attached')].filter((c): c is Condition => !!c)),
  ];
  return {
    accepted: cond(all, 'Accepted'),
    attached,
    resolvedRefs: cond(all, 'ResolvedRefs'),
  };
}

export const created = (o: KObj) => {
  const t = o.metadata?.creationTimestamp as unknown;
  return t instanceof Date ? t.toISOString() : String(t ?? '');
};

/**
 * Where a policy's settings are: for each field it sets, whether a route in `scope` (a route of a given HTTPRoute on
 * a Gateway, or any route of a Gateway) names it as provenance, and if not, which policies the routes name instead.
 */
function applicationOf(
  world: World,
  p: KObj,
  scope: { gateway: GatewayKey; routePrefix?: string }[],
): {
  applied: string[];
  notApplied: string[];
  winners: Map<string, Set<string>>;
  /** Settings some proxy pods hold from this policy and others do not (a stale or rejected config on the others). */
  uneven: { field: string; with: string[]; without: string[] }[];
  checked: boolean;
  routes: number;
} {
  const me = `TrafficPolicy/${p.metadata!.namespace}/${p.metadata!.name}`;
  const fields = policyFields(p);
  // Per proxy pod: each proxy must hold the setting, not just one of them.
  const byPod = new Map<string, Set<string>>();
  const winners = new Map<string, Set<string>>();
  let checked = false;
  let routes = 0;
  for (const s of scope) {
    if (!dumpsRead(world, s.gateway)) continue;
    checked = true;
    for (const r of configRoutes(world, s.gateway)) {
      if (s.routePrefix && !r.name.startsWith(s.routePrefix)) continue;
      routes++;
      const mine = byPod.get(r.pod) ?? new Set<string>();
      byPod.set(r.pod, mine);
      for (const f of fields) {
        const by = r.provenance[f];
        if (by === me) mine.add(f);
        else if (by) winners.set(f, new Set([...(winners.get(f) ?? []), by]));
      }
    }
  }
  const pods = [...byPod.keys()].sort();
  const holders = (f: string) => pods.filter((pod) => byPod.get(pod)!.has(f));
  const applied = fields.filter((f) => pods.length > 0 && holders(f).length === pods.length);
  const notApplied = fields.filter((f) => !applied.includes(f));
  const uneven = notApplied
    .filter((f) => holders(f).length > 0)
    .map((f) => ({ field: f, with: holders(f), without: pods.filter((pod) => !byPod.get(pod)!.has(f)) }));
  return { applied, notApplied, winners, uneven, checked, routes };
}

/** The GatewayExtension a policy's ext auth names, and why it cannot be applied (rule 3 among the causes). */
function extAuthCause(world: World, p: KObj): Finding | undefined {
  const ref = p.spec?.extAuth?.extensionRef;
  if (!ref) return undefined;
  const ns = p.metadata!.namespace!;
  const subject = subjectOf('TrafficPolicy', { namespace: ns, name: p.metadata!.name! });
  const ext = find(world.extensions, ns, ref.name);
  if (!ext) {
    return {
      level: 'problem',
      subject,
      message: `extAuth names GatewayExtension ${ns}/${ref.name}, which does not exist`,
    };
  }
  const f = extensionBackendFinding(world, ext);
  return f
    ? { ...f, subject, message: `extAuth is not applied: GatewayExtension ${ns}/${ref.name}: ${f.message}` }
    : undefined;
}

/** Why an extension's backend cannot be used: a missing Service, or (rule 3) a missing ReferenceGrant. */
export function extensionBackendFinding(world: World, ext: KObj): Finding | undefined {
  const ns = ext.metadata!.namespace!;
  const subject = subjectOf('GatewayExtension', { namespace: ns, name: ext.metadata!.name! });
  const b = ext.spec?.extAuth?.httpService?.backendRef;
  if (!b) return undefined;
  const to = { group: '', kind: 'Service', namespace: b.namespace ?? ns, name: b.name };
  const from = { group: VENDOR_GROUP, kind: 'GatewayExtension', namespace: ns };
  if (!referenceAllowed(world.grants as unknown as ReferenceGrant[], from, to)) {
    return {
      level: 'problem',
      rule: 3,
      subject,
      message: `its backend Service ${to.namespace}/${to.name} is in another namespace and no ReferenceGrant in ${to.namespace} allows it`,
      details: [
        `needed in namespace ${to.namespace}: from group ${from.group}, kind GatewayExtension, namespace ${ns}; to group "" (core), kind Service`,
        'apply this to allow it:',
      ],
      yaml: referenceGrantYaml(from, to),
    };
  }
  const svcKey = `${to.namespace}/${to.name}`;
  if (svcKey in world.services && world.services[svcKey] === null) {
    return { level: 'problem', subject, message: `its backend Service ${svcKey} does not exist` };
  }
  return undefined;
}

/** One policy's report and findings, for the routes/Gateways in `scope`. */
export function explainPolicyOn(
  world: World,
  a: Attachment,
  scope: { gateway: GatewayKey; routePrefix?: string }[],
): { report: PolicyReport; findings: Finding[] } {
  const p = a.policy;
  const ns = p.metadata!.namespace!;
  const name = p.metadata!.name!;
  const subject = subjectOf('TrafficPolicy', { namespace: ns, name });
  const status = policyStatus(p);
  const fields = policyFields(p);
  const app = applicationOf(world, p, scope);
  const verdict: PolicyReport['verdict'] = !app.checked
    ? 'not checked'
    : !app.notApplied.length
      ? 'applied'
      : app.applied.length
        ? 'partly applied'
        : 'not applied';
  const report: PolicyReport = {
    policy: `${ns}/${name}`,
    created: created(p),
    via: a.via,
    status,
    fields,
    applied: app.applied,
    notApplied: app.notApplied,
    verdict,
    ...(app.checked ? {} : { uncheckedWhy: 'no proxy config_dump of its Gateways could be read' }),
  };
  const findings: Finding[] = [];
  if (verdict === 'applied') {
    findings.push({
      level: 'ok',
      subject,
      message: `applied: ${fields.join(', ')} in config_dump (${app.routes} route(s))`,
    });
  }
  if (!app.checked || verdict === 'applied') {
    findings.push(...statusDisagreements(subject, status, verdict));
    return { report, findings };
  }
  // Not (fully) applied: find the cause of each missing setting.
  if (status.accepted?.status === 'False') {
    findings.push({
      level: 'problem',
      subject,
      message: `the policy is invalid and nothing of it is applied: ${status.accepted.message ?? status.accepted.reason}`,
    });
  } else {
    const explained = new Set<string>();
    for (const u of app.uneven) {
      explained.add(u.field);
      findings.push({
        level: 'problem',
        subject,
        message: `its ${u.field} is in the config_dump of ${u.with.join(', ')} but not of ${u.without.join(', ')}: the proxies of one Gateway disagree`,
        details: [
          'a proxy that has not taken (or has rejected) the latest configuration: look for a NACK or a pod restart',
        ],
      });
    }
    // Group the overridden settings by winner, so one older policy reads as one finding.
    const byWinner = new Map<string, string[]>();
    for (const f of app.notApplied) {
      if (explained.has(f) || !app.winners.has(f)) continue;
      explained.add(f);
      for (const w of app.winners.get(f)!) byWinner.set(w, [...(byWinner.get(w) ?? []), f]);
    }
    for (const [winner, fs] of byWinner) {
      const [, wns, wname] = winner.split('/');
      const wp = find(world.policies, wns, wname);
      const wTime = wp ? created(wp) : 'unknown';
      const older = wp
        ? wTime < report.created || (wTime === report.created && `${wns}/${wname}` < `${ns}/${name}`)
        : false;
      findings.push({
        level: 'problem',
        rule: 2,
        subject,
        message: older
          ? `overridden by the older ${winner} for ${fs.join(', ')}: when several policies target the same route, the oldest wins`
          : `overridden by ${winner} for ${fs.join(', ')}: it attaches more specifically (route rule > route > listener > gateway)`,
        details: [`${winner} created ${wTime}`, `TrafficPolicy/${ns}/${name} created ${report.created}`],
      });
    }
    const rest = app.notApplied.filter((f) => !explained.has(f));
    if (rest.includes('extAuth')) {
      const c = extAuthCause(world, p);
      if (c) {
        findings.push(c);
        rest.splice(rest.indexOf('extAuth'), 1);
      }
    }
    if (rest.length) {
      findings.push({
        level: 'problem',
        subject,
        message: app.routes
          ? `${rest.join(', ')} not in config_dump of its targets (${app.routes} route(s) checked), and no other policy supplies it`
          : `its targets have no route in the proxy config, so nothing of it can be applied`,
      });
    }
  }
  findings.push(...statusDisagreements(subject, status, verdict));
  return { report, findings };
}

/** Where the policy's status claims something the configuration contradicts. */
export function statusDisagreements(
  subject: string,
  s: PolicyReport['status'],
  verdict: PolicyReport['verdict'],
): Finding[] {
  if (verdict === 'not checked') return [];
  const out: Finding[] = [];
  const attachedTrue = (s.attached ?? []).some((c) => c.status === 'True');
  const overridden = (s.attached ?? []).some((c) => c.reason === 'Overridden');
  if (verdict === 'not applied' && s.accepted?.status === 'True') {
    out.push({
      level: 'note',
      subject,
      disagreement: attachedTrue,
      message: attachedTrue
        ? `status says Accepted and ${condText((s.attached ?? []).find((c) => c.status === 'True'))}, but none of its settings is in the proxy config`
        : 'status says Accepted, but Accepted only means the policy is valid: none of its settings is in the proxy config',
    });
  }
  if (overridden && verdict !== 'not applied') {
    out.push({
      level: 'note',
      subject,
      disagreement: true,
      message: `status says Overridden, but the proxy config has its ${verdict === 'applied' ? 'settings' : 'settings in part'}`,
    });
  }
  return out;
}
