// Estimated cost of a CRD validation rule, and kube-apiserver's limits (k8s.io/apiextensions-apiserver/pkg/apis/
// apiextensions/validation/validation.go and k8s.io/apiserver/pkg/apis/cel/config.go, Kubernetes 1.32):
// - a rule whose estimated cost exceeds StaticEstimatedCostLimit (10,000,000) is refused when the CRD is stored:
//   `Forbidden: estimated rule cost exceeds budget by factor of 2.5x (try simplifying the rule, or adding maxItems,
//   maxProperties, and maxLength where arrays, maps, and strings are declared)`;
// - the sum over rules of cost × the number of times the rule can run (the product of maxItems/maxProperties of
//   the lists and maps above it) may not exceed StaticEstimatedCRDCostLimit (100,000,000):
//   `Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by
//   factor of 1.2x (...)`.
// The estimate follows cel-go's model in outline: 1 per node, string operations proportional to the strings'
// maxLength (× 0.1), comprehensions their range's size times the cost of one step. Sizes without a bound are those
// of the largest request (3 MiB) divided by the smallest element (kube's unbounded estimate). It is an outline, not
// cel-go's estimator: a rule near a limit may be judged differently than kube-apiserver would (README).
import type { JSONSchemaProps } from '../crd.ts';
import { type Expr, elementOf, iterVarOf, type StaticType, selectField } from './types.ts';

export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/** kube's maximum size of a list/map/string value under a schema (unbounded: the request size over the smallest
 * element's serialized size). */
export function maxSize(s: JSONSchemaProps | undefined): number {
  if (!s) return MAX_REQUEST_BYTES;
  if (s.type === 'array') return s.maxItems ?? Math.floor(MAX_REQUEST_BYTES / (minSerialized(s.items) + 1));
  if (s.type === 'string')
    return s.maxLength ?? (s.enum ? Math.max(...s.enum.map((e) => String(e).length)) : MAX_REQUEST_BYTES - 2);
  if (s.type === 'object' || s.additionalProperties)
    return (
      s.maxProperties ??
      Math.floor(
        MAX_REQUEST_BYTES /
          (minSerialized(typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined) + 4),
      )
    );
  return 1;
}

function minSerialized(s: JSONSchemaProps | undefined): number {
  switch (s?.type) {
    case 'string':
      return 2 + (s.minLength ?? 0);
    case 'array':
    case 'object':
      return 2;
    default:
      return 1;
  }
}

const STRING_FUNCS = new Set([
  'contains',
  'startsWith',
  'endsWith',
  'lowerAscii',
  'upperAscii',
  'split',
  'substring',
  'trim',
  'replace',
  'indexOf',
  'lastIndexOf',
  'find',
  'findAll',
  'join',
]);

interface Scope {
  vars: Map<string, StaticType>;
}

/** The estimated cost and static type of an expression. */
function estimate(e: Expr, scope: Scope): { cost: number; type: StaticType; size: number } {
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr':
      return {
        cost: 0,
        type: 'dyn',
        size: k.value.constantKind.case === 'stringValue' ? k.value.constantKind.value.length : 1,
      };
    case 'identExpr': {
      const t = scope.vars.get(k.value.name) ?? 'dyn';
      return { cost: 1, type: t, size: t === 'dyn' ? 1 : maxSize(t.schema) };
    }
    case 'selectExpr': {
      const o = estimate(k.value.operand as Expr, scope);
      let t: StaticType = 'dyn';
      if (o.type !== 'dyn') {
        const f = selectField(o.type.schema, k.value.field);
        if (f?.found) t = { schema: f.found };
        else if (typeof o.type.schema.additionalProperties === 'object')
          t = { schema: o.type.schema.additionalProperties };
      }
      return { cost: o.cost + 1, type: t, size: t === 'dyn' ? 1 : maxSize(t.schema) };
    }
    case 'listExpr': {
      let cost = 0;
      for (const el of k.value.elements) cost += estimate(el, scope).cost;
      return { cost: cost + 10, type: 'dyn', size: k.value.elements.length };
    }
    case 'structExpr': {
      let cost = 0;
      for (const en of k.value.entries) cost += estimate(en.value as Expr, scope).cost;
      return { cost: cost + 30, type: 'dyn', size: k.value.entries.length };
    }
    case 'comprehensionExpr': {
      const c = k.value;
      const range = estimate(c.iterRange as Expr, scope);
      const inner: Scope = { vars: new Map(scope.vars) };
      inner.vars.set(c.iterVar, iterVarOf(range.type));
      inner.vars.set(c.accuVar, 'dyn');
      const step = estimate(c.loopStep as Expr, inner).cost + estimate(c.loopCondition as Expr, inner).cost;
      const init = estimate(c.accuInit as Expr, scope).cost;
      const result = estimate(c.result as Expr, inner).cost;
      return { cost: range.cost + init + result + range.size * step, type: 'dyn', size: range.size };
    }
    case 'callExpr': {
      const c = k.value;
      let cost = 1;
      const target = c.target ? estimate(c.target, scope) : undefined;
      if (target) cost += target.cost;
      const args = c.args.map((a) => estimate(a, scope));
      for (const a of args) cost += a.cost;
      const fn = c.function;
      const strLen = target?.size ?? args[0]?.size ?? 1;
      if (fn === 'matches') cost += Math.ceil(strLen * 0.1) * Math.max(1, Math.ceil((args.at(-1)?.size ?? 1) * 0.25));
      else if (STRING_FUNCS.has(fn)) cost += Math.ceil(strLen * 0.1);
      else if (fn === '_==_' || fn === '_!=_' || fn === '@in')
        cost += Math.ceil(Math.max(...args.map((a) => a.size)) * 0.1);
      let type: StaticType = 'dyn';
      if (fn === '_[_]' && args[0]) type = elementOf(args[0].type);
      return { cost, type, size: type === 'dyn' ? 1 : maxSize(type.schema) };
    }
    default:
      return { cost: 1, type: 'dyn', size: 1 };
  }
}

/** The estimated cost of a rule scoped to `schema` (`self`, `oldSelf` typed by it). */
export function estimateCost(expr: Expr, schema: JSONSchemaProps): number {
  const t: StaticType = { schema };
  return estimate(expr, {
    vars: new Map([
      ['self', t],
      ['oldSelf', t],
    ]),
  }).cost;
}

/** kube's getCostErrorMessage. */
export function costErrorMessage(description: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const f = factor < 100 ? `${factor.toFixed(1)}x` : 'more than 100x';
  return `${description} exceeds budget by factor of ${f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
