// The reasoning of `explain`, as pure functions of a World (world.ts). Verdicts about what is applied come from the
// proxies' config_dump — each route names, per setting, the policy that supplied it (provenance filter_metadata) —
// never from statuses; statuses are read to say what the control plane claims, and where the two disagree the
// report says so. Causes follow the contract's section 7: (1) a selector that matches nothing, (2) an older policy
// that wins, (3) a missing ReferenceGrant; plus routes that are not accepted or do not resolve, proxies that do not
// run, and configuration a proxy rejected.
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import { POLICY_FIELDS, type ReferenceGrant } from '../../../system/controlplane/model.ts';
import { dynamicErrors, PROVENANCE_KEY, routeConfigs } from '../../toolkit/admin.ts';
import { notReadyReasons } from '../../toolkit/describe.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import { CONTROLLER_NAME, VENDOR_API } from '../proxies.ts';
import { referenceGrantYaml } from './refgrant-yaml.ts';
import { type GatewayKey, keyOf, roleOf, type World } from './world.ts';

export const KINDS = ['HTTPRoute', 'Gateway', 'TrafficPolicy', 'GatewayExtension'] as const;
export type ExplainKind = (typeof KINDS)[number];

export interface Target {
  kind: ExplainKind;
  namespace: string;
  name: string;
}

export interface Finding {
  level: 'problem' | 'ok' | 'note';
  /** The rule of contract section 7 that explains it, when one does. */
  rule?: 1 | 2 | 3;
  /** `Kind ns/name` the finding is about. */
  subject: string;
  message: string;
  details?: string[];
  /** YAML that fixes it once applied (a missing ReferenceGrant). */
  yaml?: string;
  /** A status and the proxies' configuration say different things. */
  disagreement?: boolean;
}

export interface PolicyReport {
  policy: string;
  created: string;
  /** How it reaches the object under explanation: `targetRef HTTPRoute web`, `selector HTTPRoute app=web`, ... */
  via: string[];
  status: { accepted?: Condition; attached?: Condition[]; resolvedRefs?: Condition };
  /** The settings its spec sets. */
  fields: string[];
  /** Settings found in config_dump with this policy as their provenance. */
  applied: string[];
  notApplied: string[];
  verdict: 'applied' | 'partly applied' | 'not applied' | 'not checked';
  /** Why not checked (no proxy config could be read for its targets). */
  uncheckedWhy?: string;
}

export interface Report {
  target: Target;
  found: boolean;
  healthy: boolean;
  findings: Finding[];
  policies: PolicyReport[];
  /** The proxies consulted: Gateway → pods with state, and whether their config_dump was read. */
  proxies: { gateway: string; pods: { pod: string; ready: boolean; state: string; configRead: boolean }[] }[];
}

const GW_GROUP = 'gateway.networking.k8s.io';
const VENDOR_GROUP = VENDOR_API.split('/')[0];

const subjectOf = (kind: string, o: { namespace: string; name: string }) => `${kind} ${o.namespace}/${o.name}`;
const cond = (conds: Condition[] | undefined, type: string) => (conds ?? []).find((c) => c.type === type);
const labelsText = (l: Record<string, string> | undefined) =>
  Object.entries(l ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '(no labels)';
const matches = (want: Record<string, string>, have: Record<string, string> | undefined) =>
  Object.entries(want).every(([k, v]) => have?.[k] === v);
const condText = (c: Condition | undefined) =>
  c ? `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}` : 'no status';

function find(list: KObj[], namespace: string, name: string): KObj | undefined {
  return list.find((o) => o.metadata?.namespace === namespace && o.metadata?.name === name);
}

// ---- Gateways and their proxies ---------------------------------------------------------------------------------

/** The Gateways a route's parentRefs name (Gateway kind only), as keys. */
export function routeParents(route: KObj): GatewayKey[] {
  const ns = route.metadata!.namespace!;
  return (route.spec?.parentRefs ?? [])
    .filter((p: any) => (p.kind ?? 'Gateway') === 'Gateway' && (p.group ?? GW_GROUP) === GW_GROUP)
    .map((p: any) => ({ namespace: p.namespace ?? ns, name: p.name }));
}

function isOurs(world: World, gw: KObj): boolean {
  const cls = world.gatewayClasses.find((c) => c.metadata?.name === gw.spec?.gatewayClassName);
  return cls?.spec?.controllerName === CONTROLLER_NAME;
}

/** The routes in one Gateway's proxy configs (every ready pod whose config_dump was read), with their provenance. */
function configRoutes(
  world: World,
  g: GatewayKey,
): { pod: string; name: string; provenance: Record<string, string> }[] {
  const out: { pod: string; name: string; provenance: Record<string, string> }[] = [];
  for (const p of world.proxies[`${g.namespace}/${g.name}`]?.pods ?? []) {
    if (!p.dump) continue;
    for (const rc of routeConfigs(p.dump)) {
      for (const vh of rc.virtual_hosts ?? []) {
        for (const r of vh.routes ?? []) {
          out.push({ pod: p.pod, name: r.name ?? '', provenance: r.metadata?.filter_metadata?.[PROVENANCE_KEY] ?? {} });
        }
      }
    }
  }
  return out;
}

function dumpsRead(world: World, g: GatewayKey): number {
  return (world.proxies[`${g.namespace}/${g.name}`]?.pods ?? []).filter((p) => p.dump).length;
}

const routePrefix = (ns: string, name: string) => `httproute/${ns}/${name}/`;

/** What is wrong with a Gateway and its proxies: status, pods that do not run, configuration they rejected. */
export function gatewayFindings(world: World, g: GatewayKey): Finding[] {
  const subject = subjectOf('Gateway', g);
  const gw = find(world.gateways, g.namespace, g.name);
  if (!gw) {
    return [
      {
        level: 'problem',
        subject,
        message: `Gateway ${g.namespace}/${g.name} does not exist`,
        details: [`list Gateways with: kubectl get gateways -A`],
      },
    ];
  }
  if (!isOurs(world, gw)) {
    return [
      {
        level: 'problem',
        subject,
        message: `GatewayClass ${gw.spec?.gatewayClassName} is not handled by gwvendor (controllerName ${CONTROLLER_NAME}): nothing of this Gateway is programmed here`,
      },
    ];
  }
  const out: Finding[] = [];
  const conds: Condition[] = gw.status?.conditions ?? [];
  for (const type of ['Accepted', 'Programmed']) {
    const c = cond(conds, type);
    if (c?.status === 'False') {
      out.push({ level: 'problem', subject, message: `${condText(c)}: ${c.message ?? ''}`.trim() });
    }
  }
  const proxies = world.proxies[`${g.namespace}/${g.name}`];
  if (proxies) {
    const pods = proxies.pods;
    if (!pods.length) {
      out.push({
        level: 'problem',
        subject,
        message: `no proxy pod exists for the Gateway`,
        details: [`kubectl -n ${g.namespace} describe deployment ${g.name}`, `kubectl -n ${g.namespace} get events`],
      });
    } else if (!pods.some((p) => p.ready)) {
      for (const p of pods) {
        const reasons = notReadyReasons(p.summary);
        const events = lastEvents(p.summary.events);
        out.push({
          level: 'problem',
          subject,
          message: `the proxy pod ${p.pod} is not running: ${reasons.join('; ') || `phase ${p.summary.phase}`}`,
          details: [...events, `kubectl -n ${g.namespace} describe pod ${p.pod}`],
        });
      }
    } else {
      const ready = pods.filter((p) => p.ready);
      out.push({
        level: 'ok',
        subject,
        message: `proxy running: ${ready.map((p) => p.pod).join(', ')}${ready.length < pods.length ? ` (${pods.length - ready.length} more not ready)` : ''}`,
      });
    }
    out.push(...nackFindings(world, g));
  }
  return out;
}

/** The pod's last few distinct events, warnings first: repeated back-off lines would hide why the pull failed. */
function lastEvents(events: { type: string; reason: string; message: string }[]): string[] {
  const warnings = events.filter((e) => e.type === 'Warning');
  const pick = warnings.length ? warnings : events;
  const lines = pick.map((e) => `event ${e.type} ${e.reason}: ${e.message}`);
  return [...new Set(lines.reverse())].slice(0, 4).reverse();
}

/** Configuration a proxy of this Gateway rejected and still rejects: from /snapshots/xds, else from config_dump. */
function nackFindings(world: World, g: GatewayKey): Finding[] {
  const subject = subjectOf('Gateway', g);
  const proxies = world.proxies[`${g.namespace}/${g.name}`];
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const [node, types] of Object.entries(proxies?.xds ?? {})) {
    for (const [type, st] of Object.entries(types)) {
      const nack = st.last_nack;
      const current =
        st.status === 'NACKED' ||
        (!!nack && Number(nack.version) > Number(st.version_acked ?? Number.NEGATIVE_INFINITY));
      if (!nack || !current) continue;
      seen.add(type);
      out.push({
        level: 'problem',
        subject,
        message: `proxy ${node} rejected (NACK) the ${type} of version ${nack.version}: ${nack.detail}`,
        details: [
          `it keeps serving version ${st.version_acked ?? '(none)'}, its last accepted one`,
          `/snapshots/xds on the control plane (npm run lab:pf -- controlplane) shows last_nack for role ${roleOf(g)}`,
        ],
      });
    }
  }
  for (const p of proxies?.pods ?? []) {
    if (!p.dump) continue;
    for (const e of dynamicErrors(p.dump)) {
      const type = shortType(e.typeUrl);
      if (seen.has(type)) continue;
      seen.add(type);
      out.push({
        level: 'problem',
        subject,
        message: `proxy pod ${p.pod} holds rejected ${type} ${e.name ?? ''}: ${e.error}`.replace(/ +/g, ' '),
        details: ['config_dump error_state; the proxy keeps serving its last accepted configuration'],
      });
    }
  }
  return out;
}

function shortType(typeUrl: string): string {
  if (/Route/.test(typeUrl)) return 'routes';
  if (/Listener/.test(typeUrl)) return 'listeners';
  if (/Endpoint|ClusterLoadAssignment/.test(typeUrl)) return 'endpoints';
  if (/Cluster/.test(typeUrl)) return 'clusters';
  return typeUrl;
}

// ---- Routes ---------------------------------------------------------------------------------------------------

function routeFindings(world: World, route: KObj): Finding[] {
  const ns = route.metadata!.namespace!;
  const name = route.metadata!.name!;
  const subject = subjectOf('HTTPRoute', { namespace: ns, name });
  const out: Finding[] = [];
  const statuses: any[] = route.status?.parents ?? [];
  for (const parent of routeParents(route)) {
    const st = statuses.find(
      (s) =>
        s.controllerName === CONTROLLER_NAME &&
        s.parentRef?.name === parent.name &&
        (s.parentRef?.namespace ?? ns) === parent.namespace,
    );
    const gw = find(world.gateways, parent.namespace, parent.name);
    const pname = `Gateway ${parent.namespace}/${parent.name}`;
    if (!st) {
      out.push({
        level: 'problem',
        subject,
        message: !gw
          ? `its parentRef ${pname} does not exist`
          : !isOurs(world, gw)
            ? `its parent ${pname} is of class ${gw.spec?.gatewayClassName}, not handled by gwvendor`
            : `gwvendor has not written a status for parent ${pname} yet`,
      });
      continue;
    }
    const accepted = cond(st.conditions, 'Accepted');
    const resolved = cond(st.conditions, 'ResolvedRefs');
    if (accepted?.status !== 'True') {
      out.push({
        level: 'problem',
        subject,
        message: `not accepted by ${pname}: ${condText(accepted)}${accepted?.message ? `: ${accepted.message}` : ''}`,
      });
    } else {
      out.push({ level: 'ok', subject, message: `accepted by ${pname}` });
    }
    if (resolved?.status === 'False') {
      out.push({
        level: 'problem',
        subject,
        message: `backends do not resolve: ${condText(resolved)}: ${resolved.message ?? ''}`.trim(),
        details: ['a request matching such a rule gets HTTP 500 from the proxy'],
        ...(resolved.reason === 'RefNotPermitted' ? backendGrantFix(world, route) : {}),
      });
    } else if (resolved?.status === 'True') {
      out.push({ level: 'ok', subject, message: `backends resolved` });
    }
    const partly = cond(st.conditions, 'PartiallyInvalid');
    if (partly?.status === 'True') {
      out.push({
        level: 'problem',
        subject,
        message: `partly invalid, the invalid rules are left out: ${partly.message ?? partly.reason ?? ''}`,
      });
    }
    const programmed = cond(st.conditions, 'Programmed');
    if (programmed?.status === 'False') {
      out.push({ level: 'problem', subject, message: `${condText(programmed)}: ${programmed.message ?? ''}`.trim() });
    }
    // What the proxies actually hold of this route.
    if (gw && isOurs(world, gw) && dumpsRead(world, parent)) {
      const inConfig = configRoutes(world, parent).filter((r) => r.name.startsWith(routePrefix(ns, name)));
      const pods = [...new Set(inConfig.map((r) => r.pod))];
      if (inConfig.length && accepted?.status === 'True') {
        out.push({
          level: 'ok',
          subject,
          message: `in the proxy config of ${pname}: ${inConfig.length / Math.max(pods.length, 1)} route(s) in config_dump of ${pods.join(', ')}`,
        });
      } else if (!inConfig.length && accepted?.status === 'True') {
        out.push({
          level: 'problem',
          subject,
          disagreement: true,
          message: `status says Accepted by ${pname}, but no route of it is in that Gateway's proxy config_dump`,
          details: ['the status and the configuration disagree; a NACK or a pending push would explain it'],
        });
      } else if (inConfig.length && accepted?.status !== 'True') {
        out.push({
          level: 'problem',
          subject,
          disagreement: true,
          message: `status says not Accepted by ${pname}, yet ${inConfig.length} route(s) of it are in its proxy config_dump`,
        });
      }
    }
  }
  if (!routeParents(route).length) {
    out.push({ level: 'problem', subject, message: 'it has no parentRefs: it attaches to no Gateway' });
  }
  return out;
}

/** For a route whose cross-namespace backendRefs are not permitted: the grants that would allow them. */
function backendGrantFix(world: World, route: KObj): Pick<Finding, 'yaml'> {
  const ns = route.metadata!.namespace!;
  const grants = world.grants as unknown as ReferenceGrant[];
  const docs: string[] = [];
  for (const rule of route.spec?.rules ?? []) {
    for (const b of rule.backendRefs ?? []) {
      const to = { group: b.group ?? '', kind: b.kind ?? 'Service', namespace: b.namespace ?? ns, name: b.name };
      const from = { group: GW_GROUP, kind: 'HTTPRoute', namespace: ns };
      if (to.namespace === ns || referenceAllowed(grants, from, to)) continue;
      const yaml = referenceGrantYaml(from, to);
      if (!docs.includes(yaml)) docs.push(yaml);
    }
  }
  return docs.length ? { yaml: docs.join('---\n') } : {};
}

// ---- Policies -------------------------------------------------------------------------------------------------

interface Attachment {
  policy: KObj;
  via: string[];
}

function policyFields(p: KObj): string[] {
  return POLICY_FIELDS.filter((f) => p.spec?.[f] !== undefined);
}

/** Policies that reach a route: by targetRef or selector on the route, or on one of its parent Gateways. */
function policiesForRoute(world: World, route: KObj): Attachment[] {
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
function resolveTargets(world: World, p: KObj): { routes: KObj[]; gateways: KObj[]; unresolved: string[] } {
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
function selectorEvidence(world: World, p: KObj): string[] {
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

function policyStatus(p: KObj): PolicyReport['status'] {
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

const created = (o: KObj) => {
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
): { applied: string[]; notApplied: string[]; winners: Map<string, Set<string>>; checked: boolean; routes: number } {
  const me = `TrafficPolicy/${p.metadata!.namespace}/${p.metadata!.name}`;
  const fields = policyFields(p);
  const appliedSet = new Set<string>();
  const winners = new Map<string, Set<string>>();
  let checked = false;
  let routes = 0;
  for (const s of scope) {
    if (!dumpsRead(world, s.gateway)) continue;
    checked = true;
    for (const r of configRoutes(world, s.gateway)) {
      if (s.routePrefix && !r.name.startsWith(s.routePrefix)) continue;
      routes++;
      for (const f of fields) {
        const by = r.provenance[f];
        if (by === me) appliedSet.add(f);
        else if (by) winners.set(f, new Set([...(winners.get(f) ?? []), by]));
      }
    }
  }
  const applied = fields.filter((f) => appliedSet.has(f));
  const notApplied = fields.filter((f) => !appliedSet.has(f));
  return { applied, notApplied, winners, checked, routes };
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
function extensionBackendFinding(world: World, ext: KObj): Finding | undefined {
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
function explainPolicyOn(
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
    for (const f of app.notApplied) {
      const w = app.winners.get(f);
      if (!w) continue;
      explained.add(f);
    }
    // Group the overridden settings by winner, so one older policy reads as one finding.
    const byWinner = new Map<string, string[]>();
    for (const f of explained) for (const w of app.winners.get(f)!) byWinner.set(w, [...(byWinner.get(w) ?? []), f]);
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
function statusDisagreements(subject: string, s: PolicyReport['status'], verdict: PolicyReport['verdict']): Finding[] {
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

// ---- Entry points per kind ----------------------------------------------------------------------------------------

/** The Gateways whose proxies an explanation of `t` must read (gather.ts asks for exactly these). */
export function gatewaysNeeded(world: Omit<World, 'proxies' | 'services' | 'xdsError'>, t: Target): GatewayKey[] {
  const out = new Map<string, GatewayKey>();
  const addGw = (g: GatewayKey) => out.set(`${g.namespace}/${g.name}`, g);
  const addRoute = (r: KObj) => {
    for (const g of routeParents(r)) addGw(g);
  };
  const w = world as World;
  if (t.kind === 'HTTPRoute') {
    const r = find(world.routes, t.namespace, t.name);
    if (r) addRoute(r);
  } else if (t.kind === 'Gateway') {
    addGw(t);
  } else if (t.kind === 'TrafficPolicy') {
    const p = find(world.policies, t.namespace, t.name);
    if (p) {
      const tg = resolveTargets(w, p);
      tg.routes.forEach(addRoute);
      for (const g of tg.gateways) addGw({ namespace: g.metadata!.namespace!, name: g.metadata!.name! });
    }
  } else {
    for (const p of world.policies) {
      if (p.metadata?.namespace !== t.namespace || p.spec?.extAuth?.extensionRef?.name !== t.name) continue;
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
      const ref = p.spec?.extAuth?.extensionRef;
      const e = ref && find(world.extensions, p.metadata!.namespace!, ref.name);
      if (e) exts.push(e);
    }
  }
  return exts.flatMap((e) => {
    const b = e.spec?.extAuth?.httpService?.backendRef;
    return b ? [`${b.namespace ?? e.metadata!.namespace}/${b.name}`] : [];
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
  const list =
    t.kind === 'HTTPRoute'
      ? world.routes
      : t.kind === 'Gateway'
        ? world.gateways
        : t.kind === 'TrafficPolicy'
          ? world.policies
          : world.extensions;
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

export function explainRoute(world: World, t: Target): Report {
  const route = find(world.routes, t.namespace, t.name);
  if (!route) return notFound(t, world);
  const findings = routeFindings(world, route);
  for (const g of routeParents(route)) findings.push(...gatewayFindings(world, g));
  const policies: PolicyReport[] = [];
  const scope = routeParents(route).map((g) => ({ gateway: g, routePrefix: routePrefix(t.namespace, t.name) }));
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
  const findings = gatewayFindings(world, t);
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
  const scope = [
    ...tg.routes.flatMap((r) =>
      routeParents(r).map((g) => ({ gateway: g, routePrefix: routePrefix(r.metadata!.namespace!, r.metadata!.name!) })),
    ),
    ...tg.gateways.map((g) => ({ gateway: { namespace: g.metadata!.namespace!, name: g.metadata!.name! } })),
  ];
  const via = [...tg.routes.map((r) => `HTTPRoute ${keyOf(r)}`), ...tg.gateways.map((g) => `Gateway ${keyOf(g)}`)];
  const r = explainPolicyOn(world, { policy: p, via }, scope);
  findings.push(...r.findings);
  // Why a target's proxies may hold nothing at all: routes not accepted, pods not running, NACKs.
  for (const route of tg.routes) {
    findings.push(...routeFindings(world, route).filter((f) => f.level === 'problem'));
  }
  for (const s of new Map(scope.map((x) => [`${x.gateway.namespace}/${x.gateway.name}`, x.gateway])).values()) {
    findings.push(...gatewayFindings(world, s).filter((f) => f.level === 'problem'));
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
  const users = world.policies.filter(
    (p) => p.metadata?.namespace === t.namespace && p.spec?.extAuth?.extensionRef?.name === t.name,
  );
  if (!users.length) {
    findings.push({
      level: 'note',
      subject,
      message: 'no TrafficPolicy in its namespace uses it (spec.extAuth.extensionRef)',
    });
  }
  for (const p of users) {
    const tg = resolveTargets(world, p);
    const scope = [
      ...tg.routes.flatMap((r) =>
        routeParents(r).map((g) => ({
          gateway: g,
          routePrefix: routePrefix(r.metadata!.namespace!, r.metadata!.name!),
        })),
      ),
      ...tg.gateways.map((g) => ({ gateway: { namespace: g.metadata!.namespace!, name: g.metadata!.name! } })),
    ];
    const r = explainPolicyOn(world, { policy: p, via: [`spec.extAuth.extensionRef ${t.name}`] }, scope);
    policies.push(r.report);
    // The backend finding above already carries rule 3 and the YAML; the policy's own copy would repeat it.
    findings.push(...r.findings.filter((f) => f.rule !== 3 && !f.message.startsWith('extAuth is not applied')));
  }
  return finish(world, t, findings, policies);
}

export function explain(world: World, t: Target): Report {
  switch (t.kind) {
    case 'HTTPRoute':
      return explainRoute(world, t);
    case 'Gateway':
      return explainGateway(world, t);
    case 'TrafficPolicy':
      return explainPolicy(world, t);
    case 'GatewayExtension':
      return explainExtension(world, t);
  }
}
