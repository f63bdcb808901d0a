// The runtime cost of a rule on an actual value, for kube-apiserver's runtime limits
// (k8s.io/apiserver/pkg/apis/cel/config.go, Kubernetes 1.32): one evaluation may cost at most PerCallLimit
// (1,000,000), all rules of one request together RuntimeCELCostBudget (10,000,000). cel-go counts the evaluation
// steps; @bufbuild/cel has no such counter, so the same cost model as the estimate (cost.ts) runs over the actual
// values instead of the schema's bounds: comprehensions cost their actual list sizes, string functions their actual
// lengths. It bounds the steps the evaluation takes as the estimate bounds them for any value.
import { type CostDomain, costOf } from './cost.ts';
import { escapeProperty } from './escaping.ts';
import type { Expr } from './types.ts';

/** The values an expression can have (every element a comprehension visits), or undefined when unknown. */
type Vals = { vals?: unknown[]; constSize?: number };
const UNKNOWN: Vals = {};
/** At most this many values are followed per expression (the largest sizes dominate the cost). */
const MAX_VALS = 1000;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function fieldOf(o: Record<string, unknown>, field: string): unknown {
  if (Object.hasOwn(o, field)) return o[field];
  for (const k of Object.keys(o)) if (escapeProperty(k) === field) return o[k];
  return undefined;
}

function collect(t: Vals, each: (v: unknown, out: unknown[]) => void): Vals {
  if (!t.vals) return UNKNOWN;
  const out: unknown[] = [];
  for (const v of t.vals) {
    each(v, out);
    if (out.length >= MAX_VALS) break;
  }
  return { vals: out };
}

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.length;
  if (isObject(v)) return Object.keys(v).length;
  return 1;
}

const RUNTIME: CostDomain<Vals> = {
  dyn: UNKNOWN,
  constant: (size) => ({ constSize: size }),
  select: (t, field) =>
    collect(t, (v, out) => {
      if (!isObject(v)) return;
      const x = fieldOf(v, field);
      if (x !== undefined) out.push(x);
    }),
  index: (t) =>
    collect(t, (v, out) => {
      if (Array.isArray(v)) out.push(...v);
      else if (isObject(v)) out.push(...Object.values(v));
    }),
  iter: (t) =>
    collect(t, (v, out) => {
      if (Array.isArray(v)) out.push(...v);
      else if (isObject(v)) out.push(...Object.keys(v));
    }),
  size(t) {
    if (t.constSize !== undefined) return t.constSize;
    let n = 1;
    for (const v of t.vals ?? []) n = Math.max(n, sizeOf(v));
    return n;
  },
};

/** The cost of evaluating `expr` with `self` (and `oldSelf`) bound to these JSON values. */
export function runtimeCost(expr: Expr, self: unknown, oldSelf: unknown): number {
  return costOf(
    expr,
    new Map<string, Vals>([
      ['self', { vals: [self] }],
      ['oldSelf', oldSelf === undefined ? UNKNOWN : { vals: [oldSelf] }],
    ]),
    RUNTIME,
  ).cost;
}
