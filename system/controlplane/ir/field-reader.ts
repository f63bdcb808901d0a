// How a policy is read, one rule for TrafficPolicy (policies.ts, and the per-field readers of policy-<field>.ts it
// hands the reader to) and ListenerPolicy (listener-policy.ts): its identity (reference, key, generation, age: what
// precedence and the shared status builder read); its fields, problems collected per field path, durations converted
// (an invalid one is a problem); then the policy Valid or Invalid naming every problem, its settings applied —
// nothing of an invalid policy under strict validation, what it says as written with validation off — and each
// problem a finding.
import type { ObjectMeta } from '../model.ts';
import { toProtoDuration } from './duration.ts';
import { bad, type Finding, type ObjRef, type Outcome, ok, type ValidationMode } from './types.ts';

/** Who a policy is: its reference, `<ns>/<name>`, generation and creationTimestamp (the older wins a tie). */
export interface PolicyIdentity {
  ref: ObjRef;
  key: string;
  generation: number;
  creationTimestamp: string;
}

export function policyIdentity(kind: string, metadata: ObjectMeta): PolicyIdentity {
  const namespace = metadata.namespace ?? 'default';
  return {
    ref: { kind, namespace, name: metadata.name },
    key: `${namespace}/${metadata.name}`,
    generation: metadata.generation ?? 1,
    creationTimestamp: metadata.creationTimestamp ?? '',
  };
}

export interface FieldReader {
  problem(field: string, message: string): void;
  duration(field: string, v: string | undefined): string | undefined;
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** A reader for one policy, and the problems it collects. */
export function fieldReader(): { reader: FieldReader; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const reader: FieldReader = {
    problem: (field, message) => problems.push({ field, message }),
    duration: (field, v) => {
      if (v === undefined) return undefined;
      const d = toProtoDuration(v);
      if (!d) problems.push({ field, message: `invalid duration ${JSON.stringify(v)}` });
      return d;
    },
  };
  return { reader, problems };
}

/** What the policy's problems make of it: the settings applied, Accepted (Valid, or Invalid naming them), findings. */
export function validationOutcome<S extends object>(
  ref: ObjRef,
  mode: ValidationMode,
  problems: FieldProblem[],
  settings: S,
): { settings: S | Record<string, never>; accepted: Outcome; findings: Finding[] } {
  const invalid = problems.length > 0;
  return {
    settings: invalid && mode === 'strict' ? {} : settings,
    accepted: invalid
      ? bad('Invalid', problems.map((x) => `${x.field}: ${x.message}`).join('; '))
      : ok('Valid', 'the policy is valid'),
    findings: problems.map((pr) => ({ resource: ref, ...pr })),
  };
}
