// The CEL environment of ValidatingAdmissionPolicies: the API server's one Kubernetes CEL environment
// (../cel/env.ts: the strings extension, optionals, Kubernetes' lists, regex, URLs, IP/CIDR, quantity and format
// libraries, RE2 `matches`) with the admission variables, plus what only admission declares: the authz library of the
// `authorizer` variable (authorizer.ts) and the global form `matches(string, string)` of the standard `matches`
// overload (cel-spec's `matches_string`; the Gateway API v1.6.1 bundle's safe-upgrade policy calls it so).
// Values: JSON → CEL as Kubernetes' unstructured conversion does: whole numbers are `int` (bigint), other numbers
// `double`, objects maps (field selection and `has()` work on them).

import { type CelEnv, CelScalar, celFunc, isCelError, plan } from '@bufbuild/cel';
import { compileRe2 } from '../../../../system/shared/regex.ts';
import { kubernetesCelEnv } from '../cel/env.ts';
import { type ParsedExpr, parseCel } from '../cel/parse.ts';
import { dynValue } from '../cel/values.ts';
import { authzLibrary } from './authorizer.ts';

let env: CelEnv | undefined;

/** The admission CEL environment (built once). */
export function admissionCelEnv(): CelEnv {
  env ??= kubernetesCelEnv(Object.fromEntries(ADMISSION_VARIABLES.map((v) => [v, CelScalar.DYN])), [
    celFunc('matches', [CelScalar.STRING, CelScalar.STRING], CelScalar.BOOL, (s, re) => compileRe2(re).test(s)),
    ...authzLibrary,
  ]);
  return env;
}

export type CelProgram = (vars: Record<string, unknown>) => unknown;

/** The variables a ValidatingAdmissionPolicy's expressions may name (k8s.io/apiserver plugin/cel/compile.go). */
export const ADMISSION_VARIABLES = [
  'object',
  'oldObject',
  'request',
  'params',
  'namespaceObject',
  'variables',
  'authorizer',
] as const;

/**
 * Compiles `expr` once: the program, or the compilation error's text (as kube-apiserver reports it). A name that is
 * not a declared variable (nor a macro's iteration variable) fails as cel-go's checker fails it: `undeclared
 * reference to 'x' (in container '')`.
 */
export function compileCel(
  expr: string,
  declared: readonly string[] = ADMISSION_VARIABLES,
): { program: CelProgram } | { error: string } {
  let parsed: ParsedExpr;
  try {
    parsed = parseCel(expr);
  } catch (e) {
    return { error: `compilation failed: ${(e as Error).message}` };
  }
  const undeclared = firstUndeclared(parsed.expr, new Set(declared));
  if (undeclared) {
    const offset = parsed.sourceInfo?.positions[undeclared.id.toString()] ?? 0;
    const before = expr.slice(0, offset).split('\n');
    const where = `<input>:${before.length}:${before[before.length - 1].length + 1}`;
    return {
      error: `compilation failed: ERROR: ${where}: undeclared reference to '${undeclared.name}' (in container '')`,
    };
  }
  const run = plan(admissionCelEnv(), parsed) as (ctx?: Record<string, any>) => unknown;
  return { program: (vars) => run(vars) };
}

/** Whether a program's result is an evaluation error, and its text. */
export function celErrorText(v: unknown): string | undefined {
  return isCelError(v) ? v.message : undefined;
}

/**
 * A JSON value as CEL input, as Kubernetes' unstructured conversion: the CRD rules' schemaless mapping (../cel/values.ts
 * dynValue: whole numbers int, objects maps, wrapped lazily rather than copied).
 */
export function toCel(v: unknown): unknown {
  return dynValue(v);
}

/** The first identifier of `e` that is neither declared nor bound by an enclosing comprehension (macro). */
function firstUndeclared(e: any, bound: Set<string>): { name: string; id: bigint } | undefined {
  if (!e) return undefined;
  const k = e.exprKind;
  switch (k?.case) {
    case 'identExpr':
      return bound.has(k.value.name) ? undefined : { name: k.value.name, id: e.id };
    case 'selectExpr':
      return firstUndeclared(k.value.operand, bound);
    case 'callExpr':
      for (const a of [k.value.target, ...k.value.args]) {
        const u = firstUndeclared(a, bound);
        if (u) return u;
      }
      return undefined;
    case 'listExpr':
      for (const a of k.value.elements) {
        const u = firstUndeclared(a, bound);
        if (u) return u;
      }
      return undefined;
    case 'structExpr':
      for (const en of k.value.entries) {
        const u =
          (en.keyKind?.case === 'mapKey' ? firstUndeclared(en.keyKind.value, bound) : undefined) ??
          firstUndeclared(en.value, bound);
        if (u) return u;
      }
      return undefined;
    case 'comprehensionExpr': {
      const c = k.value;
      const outer = firstUndeclared(c.iterRange, bound) ?? firstUndeclared(c.accuInit, bound);
      if (outer) return outer;
      const inner = new Set([...bound, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])]);
      return (
        firstUndeclared(c.loopCondition, inner) ??
        firstUndeclared(c.loopStep, inner) ??
        firstUndeclared(c.result, inner)
      );
    }
    default:
      return undefined;
  }
}
