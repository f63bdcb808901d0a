// What each TrafficPolicy's attachment to one Gateway came to, as its ancestor status wants it (interfaces page,
// "Policies"): Accepted (valid, or sent as written with validation off) and Attached — Attached, Merged when it lost
// some fields to higher-priority policies or some of its values merged with other policies' (mergeType), Overridden
// when nothing of it survived, Invalid when it has nothing it can apply —
// and ResolvedRefs for the GatewayExtensions it names. Made from the tallies of attach-policies.ts's GatewayPolicies.
import type { PolicyField } from '../model.ts';
import type { PolicyTally } from './attach-policies.ts';
import type { PolicyInfo } from './policies.ts';
import { bad, type Outcome, ok, type ValidationMode } from './types.ts';

export interface PolicyAncestorReport {
  accepted: Outcome;
  attached: Outcome;
  resolvedRefs?: Outcome;
}

/** policy key → its ancestor report for this Gateway, in the order the Gateway met the policies. */
export function policyReports(
  tallies: ReadonlyMap<string, PolicyTally<PolicyInfo>>,
  mode: ValidationMode,
): Record<string, { generation: number } & PolicyAncestorReport> {
  const out: Record<string, { generation: number } & PolicyAncestorReport> = {};
  for (const [key, t] of tallies) {
    const p = t.policy;
    const accepted: Outcome =
      p.accepted.ok || mode === 'strict'
        ? p.accepted
        : ok('Valid', `not validated (validation is off), sent as written: ${p.accepted.message}`);
    out[key] = {
      generation: p.generation,
      accepted,
      attached: attachedOutcome(t),
      ...(p.extensionRefs
        ? {
            resolvedRefs: { ok: p.extensionRefs.ok, reason: p.extensionRefs.reason, message: p.extensionRefs.message },
          }
        : {}),
    };
  }
  return out;
}

function attachedOutcome(t: PolicyTally<PolicyInfo>): Outcome {
  const p = t.policy;
  const lostFields = [...t.lost.keys()].filter((f) => !t.won.has(f) && !t.merged.has(f));
  const refs = p.extensionRefs;
  if (refs && !refs.ok && !Object.keys(p.settings).some((f) => f !== refs.field)) return bad(refs.reason, refs.message);
  if (!Object.keys(p.settings).length && !p.accepted.ok) return bad('Invalid', `not applied: ${p.accepted.message}`);
  if (lostFields.length && !t.won.size && !t.merged.size) {
    return bad('Overridden', `overridden due to conflict with higher priority policy: ${describeLost(t.lost)}`);
  }
  const overridden = lostFields.length
    ? `overridden ${describeLost(new Map(lostFields.map((f) => [f, t.lost.get(f)!])))}`
    : '';
  if (t.merged.size) {
    // mergeType: some of its values merged with other policies' (field by field: policy-merge.ts).
    const merged = [...t.merged].map(([f, ms]) => `${f} as ${[...ms].join(', ')}`).join('; ');
    const applied = t.won.size ? `applied ${[...t.won].join(', ')}; ` : '';
    return ok('Merged', `merged field by field: ${applied}merged ${merged}${overridden ? `; ${overridden}` : ''}`);
  }
  if (lostFields.length) {
    return ok('Merged', `merged with higher priority policies: applied ${[...t.won].join(', ')}; ${overridden}`);
  }
  return ok('Attached', t.won.size ? `applied ${[...t.won].join(', ')}` : 'attached');
}

function describeLost(lost: Map<PolicyField, Set<string>>): string {
  return [...lost].map(([f, ws]) => `${f} by ${[...ws].join(', ')}`).join('; ');
}
