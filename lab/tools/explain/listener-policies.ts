// ListenerPolicies seen by explain: which listeners of its Gateways take their connection manager settings from it.
// The verdict comes from the proxies' config_dump — each Listener's metadata names, per setting, the policy (or the
// GatewayParameters) it came from (system/controlplane/xds/translator/hcm-settings.ts) — and the status says what the
// control plane claims; where they differ the report says so. The rule that picks one policy per port (a listener's
// sectionName beats the Gateway, then the older policy) is the control plane's (ir/listener-policy.ts), named here
// only in the message.
import { LISTENER_PROVENANCE_KEY } from '../../../system/controlplane/xds/translator/hcm-settings.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { gatewayFindings } from './gateways.ts';
import { policyStatus, statusDisagreements } from './policies.ts';
import { condText, created, type Finding, find, type PolicyReport, subjectOf, type Target } from './report.ts';
import { type GatewayKey, keyOf, type World } from './world.ts';

/** The Gateways a ListenerPolicy names (those that exist and those that do not). */
export function listenerPolicyGateways(p: KObj): GatewayKey[] {
  const ns = p.metadata!.namespace!;
  const names = new Set<string>((p.spec?.targetRefs ?? []).map((t: any) => String(t.name)));
  return [...names].map((name) => ({ namespace: ns, name }));
}

/** The settings a ListenerPolicy's spec sets (its fields but targetRefs). */
function fieldsOf(p: KObj): string[] {
  return Object.keys(p.spec ?? {}).filter((k) => k !== 'targetRefs');
}

/** Listener name → its provenance map, from each ready pod's config_dump (the first pod that has the listener). */
function listenerProvenance(world: World, g: GatewayKey): Map<string, Record<string, string>> | undefined {
  const pods = world.proxies[`${g.namespace}/${g.name}`]?.pods.filter((x) => x.dump) ?? [];
  if (!pods.length) return undefined;
  const out = new Map<string, Record<string, string>>();
  for (const pod of pods) {
    for (const c of pod.dump!.configs) {
      if (!c['@type'].endsWith('ListenersConfigDump')) continue;
      for (const d of c.dynamic_listeners ?? []) {
        const l = d.active_state?.listener;
        if (!l?.name || out.has(l.name)) continue;
        out.set(l.name, l.metadata?.filter_metadata?.[LISTENER_PROVENANCE_KEY] ?? {});
      }
    }
  }
  return out;
}

/** A ListenerPolicy's report and findings over its Gateways. */
export function explainListenerPolicyOn(world: World, p: KObj): { report: PolicyReport; findings: Finding[] } {
  const me = `ListenerPolicy/${keyOf(p)}`;
  const subject = subjectOf('ListenerPolicy', { namespace: p.metadata!.namespace!, name: p.metadata!.name! });
  const findings: Finding[] = [];
  const fields = fieldsOf(p);
  const applied = new Set<string>();
  let checked = false;
  const status = policyStatus(p);
  if (status.accepted?.status === 'False') {
    findings.push({
      level: 'problem',
      subject,
      message: `not valid, so not applied: ${status.accepted.message ?? ''}`,
    });
  }
  for (const g of listenerPolicyGateways(p)) {
    if (!find(world.gateways, g.namespace, g.name)) {
      findings.push({
        level: 'problem',
        subject,
        message: `its targetRefs name Gateway ${g.namespace}/${g.name}, which does not exist`,
      });
      continue;
    }
    const prov = listenerProvenance(world, g);
    if (!prov) continue;
    checked = true;
    for (const [listener, m] of prov) {
      const mine = Object.entries(m)
        .filter(([, v]) => v === me)
        .map(([k]) => k);
      const others = [...new Set(Object.values(m).filter((v) => v.startsWith('ListenerPolicy/') && v !== me))];
      for (const f of mine) applied.add(f);
      if (mine.length) {
        findings.push({
          level: 'ok',
          subject,
          message: `applied on Gateway ${g.namespace}/${g.name} ${listener}: ${mine.join(', ')}`,
        });
      } else if (others.length && status.accepted?.status !== 'False') {
        findings.push({
          level: 'note',
          subject,
          message: `on Gateway ${g.namespace}/${g.name} ${listener} the settings come from ${others.join(', ')}: one ListenerPolicy per port (one naming a listener beats one naming the Gateway, then the older)`,
        });
      }
    }
    findings.push(...gatewayFindings(world, g, { listeners: false }).filter((f) => f.level === 'problem'));
  }
  const verdict: PolicyReport['verdict'] = !checked
    ? 'not checked'
    : applied.size === 0
      ? 'not applied'
      : fields.every((f) => applied.has(f))
        ? 'applied'
        : 'partly applied';
  if (verdict === 'not applied' && status.accepted?.status !== 'False') {
    const attached = (status.attached ?? []).find((c) => c.status === 'False');
    if (attached)
      findings.push({
        level: 'problem',
        subject,
        message: `not applied: ${condText(attached)}: ${attached.message ?? ''}`,
      });
  }
  findings.push(...statusDisagreements(subject, status, verdict));
  const report: PolicyReport = {
    kind: 'ListenerPolicy',
    policy: keyOf(p),
    created: created(p),
    via: listenerPolicyGateways(p).map((g) => `Gateway ${g.namespace}/${g.name}`),
    status,
    fields,
    applied: [...applied],
    notApplied: fields.filter((f) => !applied.has(f)),
    verdict,
    ...(checked ? {} : { uncheckedWhy: 'no proxy config_dump of its Gateways could be read' }),
  };
  return { report, findings };
}

/** `explain listenerpolicy/<name>`. */
export function explainListenerPolicy(
  world: World,
  t: Target,
): { found: boolean; findings: Finding[]; policies: PolicyReport[] } {
  const p = find(world.listenerPolicies ?? [], t.namespace, t.name);
  if (!p) return { found: false, findings: [], policies: [] };
  const r = explainListenerPolicyOn(world, p);
  return { found: true, findings: r.findings, policies: [r.report] };
}
