// A ValidatingAdmissionPolicy's `status.typeChecking`, the cheap part of kube-apiserver's type checking
// (k8s.io/apiserver pkg/admission/plugin/policy/validating/typechecking.go, written by the
// validatingadmissionpolicy-status controller): each validation's `expression` and `messageExpression` is checked
// against the schema of every kind the policy's resourceRules name exactly (a `*` anywhere means no schema, so no
// check, as upstream), and a field of `object` or `oldObject` that the kind does not have is a warning in cel-go's
// form: `apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'` and the source line with a caret.
// Field names are what is checked, not full CEL types (the CEL environment's job, cel-env.ts).

import { type ParsedExpr, parseCel } from '../cel/parse.ts';
import type { ResourceRegistry, ResourceType } from '../resources.ts';
import type { SchemaNode } from '../schema.ts';
import type { K8sObject } from '../store.ts';

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** The kinds the policy's rules name without wildcards; undefined when any rule has one (no type checking). */
function kinds(policy: K8sObject, registry: ResourceRegistry): ResourceType[] | undefined {
  const out: ResourceType[] = [];
  for (const r of policy.spec?.matchConstraints?.resourceRules ?? []) {
    const lists = [r.apiGroups ?? [], r.apiVersions ?? [], r.resources ?? []] as string[][];
    if (lists.some((l) => l.some((x) => x.includes('*')))) return undefined;
    for (const g of r.apiGroups ?? [])
      for (const v of r.apiVersions ?? [])
        for (const res of r.resources ?? []) {
          if (res.includes('/')) continue;
          const rt = registry.get(g, v, res);
          if (rt && !out.includes(rt)) out.push(rt);
        }
  }
  return out;
}

/** The first select of an `object.`/`oldObject.` chain naming a field the schema does not have. */
function undefinedField(e: any, schema: SchemaNode): { field: string; id: bigint } | undefined {
  if (!e) return undefined;
  const k = e.exprKind;
  if (k?.case === 'selectExpr') {
    const chain: any[] = [];
    let cur = e;
    while (cur?.exprKind?.case === 'selectExpr') {
      chain.unshift(cur);
      cur = cur.exprKind.value.operand;
    }
    const root = cur?.exprKind?.case === 'identExpr' ? cur.exprKind.value.name : undefined;
    if (root === 'object' || root === 'oldObject') {
      let node: SchemaNode | undefined = schema;
      for (const sel of chain) {
        if (node.kind !== 'object' || node.preserveUnknown) break;
        node = node.field(sel.exprKind.value.field);
        if (!node) return { field: sel.exprKind.value.field, id: sel.id };
      }
      return undefined;
    }
    return undefinedField(cur, schema);
  }
  const children: any[] =
    k?.case === 'callExpr'
      ? [k.value.target, ...k.value.args]
      : k?.case === 'listExpr'
        ? k.value.elements
        : k?.case === 'structExpr'
          ? k.value.entries.map((en: any) => en.value)
          : k?.case === 'comprehensionExpr'
            ? [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result]
            : [];
  for (const c of children) {
    const u = undefinedField(c, schema);
    if (u) return u;
  }
  return undefined;
}

function issue(expr: string, rt: ResourceType): string | undefined {
  let parsed: ParsedExpr;
  try {
    parsed = parseCel(expr);
  } catch {
    return undefined;
  }
  const u = undefinedField(parsed.expr, rt.schema);
  if (!u) return undefined;
  const offset = parsed.sourceInfo?.positions[u.id.toString()] ?? 0;
  const before = expr.slice(0, offset).split('\n');
  const line = before.length;
  const col = before[before.length - 1].length + 1;
  const text = expr.split('\n')[line - 1];
  const gvk = `${rt.group ? `${rt.group}/` : ''}${rt.version}, Kind=${rt.kind}`;
  return `${gvk}: ERROR: <input>:${line}:${col}: undefined field '${u.field}'\n | ${text}\n | ${'.'.repeat(col - 1)}^\n`;
}

/** The policy's expression warnings (empty when nothing is found or nothing can be checked). */
export function typeCheck(policy: K8sObject, registry: ResourceRegistry): ExpressionWarning[] {
  const rts = kinds(policy, registry);
  if (!rts?.length) return [];
  const out: ExpressionWarning[] = [];
  (policy.spec?.validations ?? []).forEach((v: any, i: number) => {
    for (const f of ['expression', 'messageExpression']) {
      if (typeof v?.[f] !== 'string') continue;
      const found = rts.map((rt) => issue(v[f], rt)).filter((x): x is string => !!x);
      if (found.length) out.push({ fieldRef: `spec.validations[${i}].${f}`, warning: found.join('\n') });
    }
  });
  return out;
}
