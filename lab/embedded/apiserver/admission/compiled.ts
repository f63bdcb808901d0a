// A ValidatingAdmissionPolicy compiled once per resourceVersion (kube-apiserver compiles each policy when its
// informer delivers it, not per request): its match conditions, variables, validations and message expressions as
// CEL programs (audit annotations' value expressions too), and the policy's configuration error when one of them does not compile (a policy stored before its
// expressions were checked, e.g. from an older server). Evaluation of one policy × binding × param is validator.ts.
import type { K8sObject } from '../store.ts';
import { type CelProgram, compileCel } from './cel-env.ts';

export type Compiled = { program: CelProgram } | { error: string };

export interface CompiledValidation {
  expression: string;
  compiled: Compiled;
  message?: string;
  messageExpression?: Compiled;
  reason?: string;
}

export interface CompiledPolicy {
  name: string;
  uid: string;
  resourceVersion: string;
  spec: any;
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: { name: string; expression: string; compiled: Compiled }[];
  variables: { name: string; compiled: Compiled }[];
  validations: CompiledValidation[];
  auditAnnotations: { key: string; valueExpression: string; compiled: Compiled }[];
  /** The first expression that does not compile, as a configuration error. */
  configError?: string;
}

export function compilePolicy(p: K8sObject): CompiledPolicy {
  const s = p.spec ?? {};
  const errors: string[] = [];
  const comp = (path: string, expr: string): Compiled => {
    const c = compileCel(expr);
    if ('error' in c) errors.push(`${path}: Invalid value: ${JSON.stringify(expr)}: ${c.error}`);
    return c;
  };
  const out: CompiledPolicy = {
    name: p.metadata.name!,
    uid: p.metadata.uid!,
    resourceVersion: p.metadata.resourceVersion ?? '',
    spec: s,
    failurePolicy: s.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: (s.matchConditions ?? []).map((m: any, i: number) => ({
      name: m.name,
      expression: m.expression,
      compiled: comp(`spec.matchConditions[${i}].expression`, m.expression),
    })),
    variables: (s.variables ?? []).map((v: any, i: number) => ({
      name: v.name,
      compiled: comp(`spec.variables[${i}].expression`, v.expression),
    })),
    validations: (s.validations ?? []).map((v: any, i: number) => ({
      expression: v.expression,
      compiled: comp(`spec.validations[${i}].expression`, v.expression),
      message: v.message,
      messageExpression:
        v.messageExpression !== undefined
          ? comp(`spec.validations[${i}].messageExpression`, v.messageExpression)
          : undefined,
      reason: v.reason,
    })),
    auditAnnotations: (s.auditAnnotations ?? []).map((a: any, i: number) => ({
      key: a.key,
      valueExpression: a.valueExpression,
      compiled: comp(`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression),
    })),
  };
  if (errors.length) out.configError = errors[0];
  return out;
}

/** Compiled policies by uid, recompiled when their resourceVersion changes. */
export class PolicyCache {
  private readonly byUid = new Map<string, CompiledPolicy>();

  /** The compiled form of every stored policy (and forgets the deleted ones). */
  sync(policies: K8sObject[]): CompiledPolicy[] {
    const out: CompiledPolicy[] = [];
    const live = new Set<string>();
    for (const p of policies) {
      const uid = p.metadata.uid!;
      live.add(uid);
      let c = this.byUid.get(uid);
      if (!c || c.resourceVersion !== p.metadata.resourceVersion) {
        c = compilePolicy(p);
        this.byUid.set(uid, c);
      }
      out.push(c);
    }
    if (this.byUid.size > live.size) for (const uid of this.byUid.keys()) if (!live.has(uid)) this.byUid.delete(uid);
    return out;
  }
}
