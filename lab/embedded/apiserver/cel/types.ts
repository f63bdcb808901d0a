// Static types of CEL expressions over a CRD schema, for the checks kube-apiserver's type checker makes when a CRD
// is stored (k8s.io/apiserver/pkg/cel/common/schemas.go: an object schema is a CEL object type whose fields are its
// escaped properties, so selecting an undeclared field is a compile error, `undefined field 'x'`), and for the cost
// estimate (cost.ts), which needs list, map and string bounds (maxItems, maxProperties, maxLength).
import type { parse } from '@bufbuild/cel';
import type { JSONSchemaProps } from '../json-schema.ts';
import { escapeProperty } from './escaping.ts';

/** A parsed CEL expression (cel.expr.Expr, as @bufbuild/cel's parser returns it). */
export type Expr = ReturnType<typeof parse>['expr'];

/** A schema-typed expression, or `dyn` when its type is not known from the schema. */
export type StaticType = { schema: JSONSchemaProps } | 'dyn';

/** The property a CEL field name selects in an object schema: `{ found }`, or undefined when it is not an object. */
export function selectField(s: JSONSchemaProps, field: string): { found?: JSONSchemaProps } | undefined {
  if (s.properties && !s['x-kubernetes-int-or-string']) {
    for (const [p, ps] of Object.entries(s.properties)) if (escapeProperty(p) === field) return { found: ps };
    if (s['x-kubernetes-preserve-unknown-fields']) return undefined;
    return {};
  }
  return undefined;
}

/** The element schema of a list, or the value schema of a map. */
export function elementOf(t: StaticType): StaticType {
  if (t === 'dyn') return 'dyn';
  const s = t.schema;
  if (s.type === 'array' && s.items) return { schema: s.items };
  if (typeof s.additionalProperties === 'object') return { schema: s.additionalProperties };
  return 'dyn';
}

/** What a comprehension iterates: list elements, or map keys (strings; kube's map key type has no size bound, which
 * its estimator counts as 0, so key strings add no traversal cost). */
export function iterVarOf(t: StaticType): StaticType {
  if (t === 'dyn') return 'dyn';
  const s = t.schema;
  if (s.type === 'array') return s.items ? { schema: s.items } : 'dyn';
  if (s.type === 'object' || s.properties || s.additionalProperties)
    return { schema: { type: 'string', maxLength: 0 } };
  return 'dyn';
}
