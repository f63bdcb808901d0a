// The CEL environment of ValidatingAdmissionPolicies: the one place this server's admission plugin gets its CEL from.
// @bufbuild/cel (a CEL-spec-conformant evaluator) with the strings extension, RE2 regexes from
// system/shared/regex.ts (Kubernetes' CEL uses RE2, as cel-go does) and the global form `matches(string, string)`
// of the standard `matches` overload (cel-spec's `matches_string`; the Gateway API v1.6.1 bundle's safe-upgrade
// policy calls it so). The Kubernetes CEL libraries for CRD rules are built beside this (apiserver/cel/); at merge,
// `admissionCelEnv` is the seam to point at that environment: nothing else here builds CEL functions.
// Values: JSON → CEL as Kubernetes' unstructured conversion does: whole numbers are `int` (bigint), other numbers
// `double`, objects maps (field selection and `has()` work on them).
import { type CelEnv, CelScalar, celEnv, celFunc, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { compileRe2 } from '../../../../system/shared/regex.ts';

let env: CelEnv | undefined;

/** The admission CEL environment (built once). */
export function admissionCelEnv(): CelEnv {
  env ??= celEnv({
    funcs: [
      ...strings,
      celFunc('matches', [CelScalar.STRING, CelScalar.STRING], CelScalar.BOOL, (s, re) => compileRe2(re).test(s)),
    ],
    re2: { compile: (p) => compileRe2(p) },
  });
  return env;
}

export type CelProgram = (vars: Record<string, unknown>) => unknown;

/** Compiles `expr` once: the program, or the compilation error's text (as kube-apiserver reports it). */
export function compileCel(expr: string): { program: CelProgram } | { error: string } {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expr);
  } catch (e) {
    return { error: `compilation failed: ${(e as Error).message}` };
  }
  const run = plan(admissionCelEnv(), parsed) as (ctx?: Record<string, any>) => unknown;
  return { program: (vars) => run(vars) };
}

/** Whether a program's result is an evaluation error, and its text. */
export function celErrorText(v: unknown): string | undefined {
  return isCelError(v) ? v.message : undefined;
}

/** A JSON value as CEL input: whole numbers → int (bigint), the rest unchanged. */
export function toCel(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toCel(x);
    return out;
  }
  return v;
}
