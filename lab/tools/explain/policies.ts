// TrafficPolicies seen by explain: what reaches a route or Gateway and who wins each setting (the control plane's own
// decision, attachment.ts), what each one's settings became in the proxies' config_dump (by provenance), and the
// cause of each setting that is missing — rule 1 (selector), rule 2 (an older policy on the same level), rule 3 (a
// missing ReferenceGrant) — or, for a more specific policy that overrides it, the designed precedence (not a problem).
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import {
  extensionBackendRefs,
  POLICY_FIELDS,
  type PolicyField,
  policyExtensionRefs,
  type ReferenceGrant,
} from '../../../system/controlplane/model.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import { attachmentsOver, type ScopeEntry } from './attachment.ts';
import { configRoutes, dumpsRead, routeParents, routePrefix } from './gateways.ts';
import { referenceGrantYaml } from './refgrant-yaml.ts';
import {
  cond,
  condText,
  created,
  type FieldDecisionSummary,
  type Finding,
  find,
  labelsText,
  matches,
  type PolicyReport,
  subjectOf,
  VENDOR_GROUP,
} from './report.ts';
import { keyOf, type World } from './world.ts';

export interface Attachment {
  policy: KObj;
  via: string[];
}

export function policyFields(p: KObj): string[] {
  return POLICY_FIELDS.filter((f) => p.spec?.[f] !== undefined);
}

/** The policies that reach a route on its Gateways, with how, as the control plane's attachment decides. */
export function policiesForRoute(world: World, route: KObj): Attachment[] {
  const decided = attachmentsOver(
    world,
    routeParents(route).map((g) => ({ gateway: g, route })),
  );
  return world.policies.flatMap((p) => {
    const a = decided.get(keyOf(p));
    return a ? [{ policy: p, via: a.via }] : [];
  });
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

export { created };

/**
 * Where a policy's settings are: for each field it sets, whether a route in `scope` (a route of a given HTTPRoute on
 * a Gateway, or any route of a Gateway) names it as provenance, and if not, which policies the routes name instead.
 */
function applicationOf(
  world: World,
  p: KObj,
  scope: ScopeEntry[],
): {
  applied: string[];
  notApplied: string[];
  /** Settings some proxy pods hold from this policy and others do not (a stale or rejected config on the others). */
  uneven: { field: string; with: string[]; without: string[] }[];
  checked: boolean;
  routes: number;
} {
  const me = `TrafficPolicy/${p.metadata!.namespace}/${p.metadata!.name}`;
  const fields = policyFields(p);
  // Per proxy pod: each proxy must hold the setting, not just one of them.
  const byPod = new Map<string, Set<string>>();
  let checked = false;
  let routes = 0;
  for (const s of scope) {
    if (!dumpsRead(world, s.gateway)) continue;
    checked = true;
    const prefix = s.route ? routePrefix(s.route.metadata!.namespace!, s.route.metadata!.name!) : undefined;
    for (const r of configRoutes(world, s.gateway)) {
      if (prefix && !r.name.startsWith(prefix)) continue;
      routes++;
      const mine = byPod.get(r.pod) ?? new Set<string>();
      byPod.set(r.pod, mine);
      // A merged setting names every policy merged (`A+B`, attach-policies.ts): each of them is applied.
      for (const f of fields) if (r.provenance[f]?.split('+').includes(me)) mine.add(f);
    }
  }
  const pods = [...byPod.keys()].sort();
  const holders = (f: string) => pods.filter((pod) => byPod.get(pod)!.has(f));
  const applied = fields.filter((f) => pods.length > 0 && holders(f).length === pods.length);
  const notApplied = fields.filter((f) => !applied.includes(f));
  const uneven = notApplied
    .filter((f) => holders(f).length > 0)
    .map((f) => ({ field: f, with: holders(f), without: pods.filter((pod) => !byPod.get(pod)!.has(f)) }));
  return { applied, notApplied, uneven, checked, routes };
}

/**
 * The GatewayExtension a policy's field names (extAuth, rateLimit.global, extProc), and why it cannot be applied
 * (rule 3 among the causes).
 */
function extensionCause(world: World, p: KObj, field: string): Finding | undefined {
  const ref = policyExtensionRefs(p.spec).find((r) => r.field === field);
  if (!ref) return undefined;
  const ns = p.metadata!.namespace!;
  const subject = subjectOf('TrafficPolicy', { namespace: ns, name: p.metadata!.name! });
  const ext = find(world.extensions, ns, ref.name);
  if (!ext) {
    return {
      level: 'problem',
      subject,
      message: `${field} names GatewayExtension ${ns}/${ref.name}, which does not exist`,
    };
  }
  const f = extensionBackendFinding(world, ext);
  return f
    ? { ...f, subject, message: `${field} is not applied: GatewayExtension ${ns}/${ref.name}: ${f.message}` }
    : undefined;
}

/** Why an extension's backend cannot be used: a missing Service, or (rule 3) a missing ReferenceGrant. */
export function extensionBackendFinding(world: World, ext: KObj): Finding | undefined {
  const ns = ext.metadata!.namespace!;
  const subject = subjectOf('GatewayExtension', { namespace: ns, name: ext.metadata!.name! });
  const b = extensionBackendRefs(ext.spec)[0]?.ref;
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
  scope: ScopeEntry[],
): { report: PolicyReport; findings: Finding[] } {
  const p = a.policy;
  const ns = p.metadata!.namespace!;
  const name = p.metadata!.name!;
  const subject = subjectOf('TrafficPolicy', { namespace: ns, name });
  const status = policyStatus(p);
  const fields = policyFields(p);
  const app = applicationOf(world, p, scope);
  // The control plane's decision over the same routes: who the rules give each setting to, and why.
  const decision = attachmentsOver(world, scope).get(keyOf(p))?.fields ?? [];
  const verdict = verdictOf(app);
  const report: PolicyReport = {
    policy: `${ns}/${name}`,
    created: created(p),
    via: a.via,
    status,
    fields,
    applied: app.applied,
    notApplied: app.notApplied,
    verdict,
    decision,
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
  findings.push(...designedOverrides(subject, decision));
  findings.push(...refusedMerges(subject, decision));
  // The status speaks for every route of each ancestor Gateway: it is compared with the config of all of them.
  const wideVerdict = scope.some((s) => s.route) ? verdictOf(applicationOf(world, p, gatewaysOf(scope))) : verdict;
  if (!app.checked || verdict === 'applied') {
    findings.push(...configAgainstRules(subject, decision, app.applied));
    findings.push(...statusDisagreements(subject, status, wideVerdict));
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
    findings.push(...missingCauses(world, p, app, decision, report.created));
  }
  findings.push(...configAgainstRules(subject, decision, app.applied));
  findings.push(...statusDisagreements(subject, status, wideVerdict));
  return { report, findings };
}

function verdictOf(app: ReturnType<typeof applicationOf>): PolicyReport['verdict'] {
  if (!app.checked) return 'not checked';
  if (!app.notApplied.length) return 'applied';
  return app.applied.length ? 'partly applied' : 'not applied';
}

/** Each Gateway of the scope once, with all of its routes. */
function gatewaysOf(scope: ScopeEntry[]): ScopeEntry[] {
  return [...new Map(scope.map((s) => [`${s.gateway.namespace}/${s.gateway.name}`, { gateway: s.gateway }])).values()];
}

/** Settings a more specific policy takes over, by the designed precedence: worth knowing, not a problem. */
function designedOverrides(subject: string, decision: FieldDecisionSummary[]): Finding[] {
  const byWinner = new Map<string, { fields: string[]; routes: Set<string> }>();
  for (const d of decision) {
    for (const l of d.lostTo) {
      if (l.rule !== 'more specific') continue;
      const w = byWinner.get(l.winner) ?? { fields: [], routes: new Set<string>() };
      w.fields.push(d.field);
      for (const r of l.routes) w.routes.add(r);
      byWinner.set(l.winner, w);
    }
  }
  return [...byWinner].map(([winner, w]) => ({
    level: 'note' as const,
    subject,
    message: `its ${w.fields.join(', ')} on HTTPRoute ${[...w.routes].join(', ')} is overridden by ${winner}, which attaches more specifically (route rule > route > listener > gateway): the designed precedence, not a conflict`,
  }));
}

/** Whether the rules merge the policy's value of the field under another's on some route (so it is applied there). */
const mergedSomewhere = (d: FieldDecisionSummary) => d.lostTo.some((l) => l.rule === 'merged');

/** A merge its mergeType asks for that the control plane refused (the merged value is invalid): the cause. */
function refusedMerges(subject: string, decision: FieldDecisionSummary[]): Finding[] {
  return decision
    .filter((d) => d.mergeRefused)
    .map((d) => ({
      level: 'problem' as const,
      subject,
      message: `its mergeType asks to merge ${d.field} onto lower-priority policies, but the merged value is invalid, so its own value applies alone: ${d.mergeRefused}`,
    }));
}

/** Settings config_dump has from this policy where the rules give them to another one everywhere in the scope. */
function configAgainstRules(subject: string, decision: FieldDecisionSummary[], applied: string[]): Finding[] {
  return decision
    .filter((d) => applied.includes(d.field) && !d.wonOn.length && d.lostTo.length && !mergedSomewhere(d))
    .map((d) => ({
      level: 'problem' as const,
      subject,
      disagreement: true,
      message: `its ${d.field} is in config_dump, but the control plane's rules give it to ${d.lostTo.map((l) => `${l.winner} (${l.rule})`).join(', ')}`,
      details: ['the proxies hold a configuration the control plane no longer computes: a NACK or a pending push'],
    }));
}

/** Why the settings missing from config_dump are missing: uneven proxies, rule 2, rule 3, or nothing supplies them. */
function missingCauses(
  world: World,
  p: KObj,
  app: ReturnType<typeof applicationOf>,
  decision: FieldDecisionSummary[],
  myCreated: string,
): Finding[] {
  const ns = p.metadata!.namespace!;
  const name = p.metadata!.name!;
  const subject = subjectOf('TrafficPolicy', { namespace: ns, name });
  const findings: Finding[] = [];
  const explained = new Set<string>();
  for (const u of app.uneven) {
    explained.add(u.field);
    findings.push({
      level: 'problem',
      subject,
      message: `its ${u.field} is in the config_dump of ${u.with.join(', ')} but not of ${u.without.join(', ')}: the proxies of one Gateway disagree`,
      details: [
        'a proxy that has not taken (or has rejected) the latest configuration: look for a NACK or a pending push',
      ],
    });
  }
  // Group the settings lost on every route by winner, so one older policy reads as one finding.
  const byWinner = new Map<string, { rule: string; fields: string[] }>();
  for (const f of app.notApplied) {
    const d = decision.find((x) => x.field === f);
    if (explained.has(f) || !d || d.wonOn.length || !d.lostTo.length || mergedSomewhere(d)) continue;
    explained.add(f);
    for (const l of d.lostTo) {
      if (l.rule === 'more specific') continue; // designedOverrides says it
      const w = byWinner.get(l.winner) ?? { rule: l.rule, fields: [] };
      w.fields.push(f);
      byWinner.set(l.winner, w);
    }
  }
  for (const [winner, w] of byWinner) {
    const [, wns, wname] = winner.split('/');
    const wp = find(world.policies, wns, wname);
    findings.push({
      level: 'problem',
      rule: 2,
      subject,
      message:
        w.rule === 'older'
          ? `overridden by the older ${winner} for ${w.fields.join(', ')}: when several policies target the same route, the oldest wins`
          : `overridden by ${winner} for ${w.fields.join(', ')}: created in the same second, the name ${wns}/${wname} sorts first`,
      details: [
        `${winner} created ${wp ? created(wp) : 'unknown'}`,
        `TrafficPolicy/${ns}/${name} created ${myCreated}`,
      ],
    });
  }
  const rest = app.notApplied.filter((f) => !explained.has(f));
  for (const field of ['extAuth', 'rateLimit', 'extProc']) {
    if (!rest.includes(field as PolicyField) || decision.some((d) => d.field === field)) continue;
    const c = extensionCause(world, p, field);
    if (c) {
      findings.push(c);
      rest.splice(rest.indexOf(field as PolicyField), 1);
    }
  }
  const given = rest.filter((f) => decision.some((d) => d.field === f && (d.wonOn.length || mergedSomewhere(d))));
  if (given.length && app.routes) {
    findings.push({
      level: 'problem',
      subject,
      disagreement: true,
      message: `the control plane's rules give it ${given.join(', ')}, but config_dump of its targets (${app.routes} route(s) checked) does not have it`,
      details: [
        'a proxy that has not taken (or has rejected) the latest configuration: look for a NACK or a pending push',
      ],
    });
  }
  const none = rest.filter((f) => !given.includes(f) || !app.routes);
  if (none.length) {
    findings.push({
      level: 'problem',
      subject,
      message: app.routes
        ? `${none.join(', ')} not in config_dump of its targets (${app.routes} route(s) checked), and no other policy supplies it`
        : `its targets have no route in the proxy config, so nothing of it can be applied`,
    });
  }
  return findings;
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
