// The person-readable form of an explain Report: the verdict first, then what is wrong (with the rule of contract
// section 7 that explains it and the YAML that fixes it), then the policies and the proxies that were consulted.
import type { Finding, PolicyReport, Report } from './analyze.ts';

const MARK: Record<Finding['level'], string> = { problem: '✗', note: '!', ok: '✓' };

function findingLines(f: Finding): string[] {
  const tags = [f.rule ? `rule ${f.rule}` : '', f.disagreement ? 'status and config disagree' : '']
    .filter(Boolean)
    .map((t) => `[${t}] `)
    .join('');
  const out = [`  ${MARK[f.level]} ${tags}${f.subject}: ${f.message}`];
  for (const d of f.details ?? []) out.push(`      ${d}`);
  if (f.yaml) {
    out.push('');
    for (const l of f.yaml.trimEnd().split('\n')) out.push(`      ${l}`);
    out.push('');
  }
  return out;
}

function policyLines(p: PolicyReport): string[] {
  const s = p.status;
  const status = [
    s.accepted ? `Accepted=${s.accepted.status} (${s.accepted.reason})` : 'no Accepted condition',
    ...(s.attached ?? []).map((c) => `Attached=${c.status} (${c.reason})`),
    ...(s.resolvedRefs ? [`ResolvedRefs=${s.resolvedRefs.status} (${s.resolvedRefs.reason})`] : []),
  ].join(', ');
  const applied =
    p.verdict === 'not checked'
      ? `not checked: ${p.uncheckedWhy}`
      : `${p.verdict}${p.applied.length ? `: ${p.applied.join(', ')}` : ''}${p.notApplied.length ? `; missing from config_dump: ${p.notApplied.join(', ')}` : ''}`;
  // The control plane's decision (attach-policies.ts), per field: where it wins, to whom it loses and by which rule.
  const rules = (p.decision ?? []).map((d) => {
    const won = d.wonOn.length ? [`wins on ${d.wonOn.join(', ')}`] : [];
    const merges = (d.merges ?? []).map((m) => `merged as ${m.policies} on ${m.routes.join(', ')}`);
    const lost = d.lostTo.map((l) =>
      l.rule === 'merged'
        ? `merged under ${l.winner} (${l.mergeType}) on ${l.routes.join(', ')}`
        : `loses to ${l.winner} (${l.rule}) on ${l.routes.join(', ')}`,
    );
    const refused = d.mergeRefused ? [`merge not made: ${d.mergeRefused}`] : [];
    return `${d.field}: ${[...won, ...merges, ...lost, ...refused].join('; ')}`;
  });
  return [
    `  ${p.kind ?? 'TrafficPolicy'} ${p.policy}  (created ${p.created})`,
    `    via      ${p.via.join('; ') || '-'}`,
    `    sets     ${p.fields.join(', ') || '-'}`,
    `    status   ${status}`,
    ...(p.decision ? [`    rules    ${rules.join('; ') || 'supplies nothing here'}`] : []),
    `    config   ${applied}`,
  ];
}

export function renderReport(r: Report): string {
  const t = r.target;
  const problems = r.findings.filter((f) => f.level === 'problem').length;
  const lines = [
    `${t.kind} ${t.namespace}/${t.name}: ${r.healthy ? 'healthy' : `${problems} problem${problems === 1 ? '' : 's'}`}`,
    '',
  ];
  const order: Finding['level'][] = ['problem', 'note', 'ok'];
  for (const level of order)
    for (const f of r.findings.filter((x) => x.level === level)) lines.push(...findingLines(f));
  if (r.policies.length) {
    lines.push('', "Policies (applied = found in the proxies' config_dump by provenance, not read from statuses)");
    for (const p of r.policies) lines.push(...policyLines(p));
  }
  if (r.proxies.length) {
    lines.push('', 'Proxies consulted');
    for (const g of r.proxies) {
      if (!g.pods.length) lines.push(`  Gateway ${g.gateway}: no proxy pod`);
      for (const p of g.pods) {
        lines.push(`  Gateway ${g.gateway}: pod ${p.pod} ${p.state}${p.configRead ? ', config_dump read' : ''}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
