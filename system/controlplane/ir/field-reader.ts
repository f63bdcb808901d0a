// How a policy's fields are read and what its validation comes to, one rule for TrafficPolicy (policies.ts, and the
// per-field readers of policy-<field>.ts it hands the reader to) and ListenerPolicy (listener-policy.ts): problems are
// collected per field path, durations converted (an invalid one is a problem); then the policy is Valid or Invalid
// naming every problem, its settings applied — nothing of an invalid policy under strict validation, what it says as
// written with validation off — and each problem a finding.

import { toProtoDuration } from './duration.ts';
import { bad, type Finding, type ObjRef, type Outcome, ok, type ValidationMode } from './types.ts';

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
