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
import type { JSONSchemaProps } from '../json-schema.ts';
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

/**
 * What the cost model needs to know of an expression's value: the estimate (compile time) knows schemas and their
 * bounds, the runtime cost (runtime-cost.ts) the actual values. One cost model runs over either.
 */
export interface CostDomain<T> {
  dyn: T;
  constant(size: number): T;
  select(t: T, field: string): T;
  index(t: T): T;
  iter(t: T): T;
  size(t: T): number;
}

/** The compile-time view: a schema type, or the size of a literal. */
type Static = { type: StaticType; constSize?: number };
const DYN: Static = { type: 'dyn' };

const STATIC: CostDomain<Static> = {
  dyn: DYN,
  constant: (size) => ({ type: 'dyn', constSize: size }),
  select(t, field) {
    if (t.type === 'dyn') return DYN;
    const f = selectField(t.type.schema, field);
    if (f?.found) return { type: { schema: f.found } };
    if (typeof t.type.schema.additionalProperties === 'object')
      return { type: { schema: t.type.schema.additionalProperties } };
    return DYN;
  },
  index: (t) => ({ type: elementOf(t.type) }),
  iter: (t) => ({ type: iterVarOf(t.type) }),
  size: (t) => t.constSize ?? (t.type === 'dyn' ? 1 : maxSize(t.type.schema)),
};

/** The cost of an expression (cel-go's model in outline) and its value's description in `d`. */
export function costOf<T>(e: Expr, vars: Map<string, T>, d: CostDomain<T>): { cost: number; type: T } {
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr':
      return {
        cost: 0,
        type: d.constant(k.value.constantKind.case === 'stringValue' ? k.value.constantKind.value.length : 1),
      };
    case 'identExpr':
      return { cost: 1, type: vars.get(k.value.name) ?? d.dyn };
    case 'selectExpr': {
      const o = costOf(k.value.operand as Expr, vars, d);
      return { cost: o.cost + 1, type: d.select(o.type, k.value.field) };
    }
    case 'listExpr': {
      let cost = 0;
      for (const el of k.value.elements) cost += costOf(el, vars, d).cost;
      return { cost: cost + 10, type: d.constant(k.value.elements.length) };
    }
    case 'structExpr': {
      let cost = 0;
      for (const en of k.value.entries) cost += costOf(en.value as Expr, vars, d).cost;
      return { cost: cost + 30, type: d.constant(k.value.entries.length) };
    }
    case 'comprehensionExpr': {
      const c = k.value;
      const range = costOf(c.iterRange as Expr, vars, d);
      const inner = new Map(vars);
      inner.set(c.iterVar, d.iter(range.type));
      inner.set(c.accuVar, d.dyn);
      const step = costOf(c.loopStep as Expr, inner, d).cost + costOf(c.loopCondition as Expr, inner, d).cost;
      const init = costOf(c.accuInit as Expr, vars, d).cost;
      const result = costOf(c.result as Expr, inner, d).cost;
      const n = d.size(range.type);
      return { cost: range.cost + init + result + n * step, type: d.dyn };
    }
    case 'callExpr': {
      const c = k.value;
      let cost = 1;
      const target = c.target ? costOf(c.target, vars, d) : undefined;
      if (target) cost += target.cost;
      const args = c.args.map((a) => costOf(a, vars, d));
      for (const a of args) cost += a.cost;
      const fn = c.function;
      const strLen = d.size((target ?? args[0])?.type ?? d.dyn);
      if (fn === 'matches')
        cost += Math.ceil(strLen * 0.1) * Math.max(1, Math.ceil(d.size(args.at(-1)?.type ?? d.dyn) * 0.25));
      else if (STRING_FUNCS.has(fn)) cost += Math.ceil(strLen * 0.1);
      else if (fn === '_==_' || fn === '_!=_' || fn === '@in')
        cost += Math.ceil(Math.max(...args.map((a) => d.size(a.type))) * 0.1);
      return { cost, type: fn === '_[_]' && args[0] ? d.index(args[0].type) : d.dyn };
    }
    default:
      return { cost: 1, type: d.dyn };
  }
}

/** The estimated cost of a rule scoped to `schema` (`self`, `oldSelf` typed by it). */
export function estimateCost(expr: Expr, schema: JSONSchemaProps): number {
  const t: Static = { type: { schema } };
  return costOf(
    expr,
    new Map<string, Static>([
      ['self', t],
      ['oldSelf', t],
    ]),
    STATIC,
  ).cost;
}

/** kube's getCostErrorMessage. */
export function costErrorMessage(description: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const f = factor < 100 ? `${factor.toFixed(1)}x` : 'more than 100x';
  return `${description} exceeds budget by factor of ${f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
