// The type checks kube-apiserver's CEL compiler makes when a CRD is stored (cel-go's checker over the schema's
// declared types, k8s.io/apiserver/pkg/cel/common/schemas.go), as far as they can be decided here: a field the
// schema does not declare (`undefined field 'x'`), operators applied to values of types they have no overload for
// (`found no matching overload for '_==_' applied to '(string, int)'`), and a rule that does not evaluate to a bool
// (`cel expression must evaluate to a bool`). Types come from the schema (integer → int, number → double, string
// formats date-time/duration/byte → timestamp/duration/bytes, ...) and from literals; where a type is not known
// (int-or-string, preserve-unknown-fields, library calls) nothing is reported, so a rule kube accepts is never
// refused — some that kube refuses pass here and fail when evaluated instead.
import type { JSONSchemaProps } from '../json-schema.ts';
import { type Expr, elementOf, iterVarOf, type StaticType, selectField } from './types.ts';

type Prim = 'int' | 'uint' | 'double' | 'string' | 'bool' | 'bytes' | 'null_type' | 'timestamp' | 'duration';
/** A checked type: a schema, a primitive, or unknown (dyn). */
type T = { schema?: JSONSchemaProps; prim?: Prim };
const DYN: T = {};
const BOOL: T = { prim: 'bool' };

function primOf(t: T): Prim | undefined {
  if (t.prim) return t.prim;
  const s = t.schema;
  if (!s || s['x-kubernetes-int-or-string']) return undefined;
  switch (s.type) {
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'string':
      return s.format === 'date-time'
        ? 'timestamp'
        : s.format === 'duration'
          ? 'duration'
          : s.format === 'byte'
            ? 'bytes'
            : 'string';
    default:
      return undefined;
  }
}

const NUMERIC = new Set<Prim>(['int', 'uint', 'double']);
const GO_NAME: Partial<Record<Prim, string>> = {
  timestamp: 'google.protobuf.Timestamp',
  duration: 'google.protobuf.Duration',
};
const name = (p: Prim) => GO_NAME[p] ?? p;

const BOOL_FUNCS = new Set([
  '_==_',
  '_!=_',
  '_<_',
  '_<=_',
  '_>_',
  '_>=_',
  '@in',
  '_&&_',
  '_||_',
  '!_',
  '@not_strictly_false',
  'matches',
  'contains',
  'startsWith',
  'endsWith',
  'isSorted',
  'isIP',
  'isCIDR',
  'isURL',
  'isQuantity',
]);
const CONVERSIONS: Record<string, Prim> = {
  int: 'int',
  uint: 'uint',
  double: 'double',
  string: 'string',
  bool: 'bool',
  bytes: 'bytes',
  timestamp: 'timestamp',
  duration: 'duration',
  size: 'int',
};

/** The overload error of an operator on these argument types, or undefined when it has one (or types are unknown). */
function overloadError(fn: string, args: T[]): string | undefined {
  const ps = args.map(primOf);
  if (ps.some((p) => p === undefined || p === 'null_type')) return undefined;
  const [a, b] = ps as Prim[];
  const bad = () => `found no matching overload for '${fn}' applied to '(${(ps as Prim[]).map(name).join(', ')})'`;
  switch (fn) {
    case '_==_':
    case '_!=_':
      return a !== b && !(NUMERIC.has(a) && NUMERIC.has(b)) ? bad() : undefined;
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      return a !== b && !(NUMERIC.has(a) && NUMERIC.has(b))
        ? bad()
        : a === 'bool' && b === 'bool'
          ? undefined
          : undefined;
    case '_+_':
      if (a === b && a !== 'bool') return undefined;
      return (a === 'timestamp' && b === 'duration') || (a === 'duration' && b === 'timestamp') ? undefined : bad();
    case '_-_':
      if (a === b && (NUMERIC.has(a) || a === 'duration' || a === 'timestamp')) return undefined;
      return a === 'timestamp' && b === 'duration' ? undefined : bad();
    case '_*_':
    case '_/_':
    case '_%_':
      return a === b && NUMERIC.has(a) && !(fn === '_%_' && a === 'double') ? undefined : bad();
    case '_&&_':
    case '_||_':
      return a === 'bool' && b === 'bool' ? undefined : bad();
    case '!_':
      return a === 'bool' ? undefined : bad();
    default:
      return undefined;
  }
}

export interface CheckResult {
  /** The first error, with its position (an offset in the rule). */
  error?: { offset: number; message: string };
  /** Whether the rule's type is known not to be bool. */
  notBool: boolean;
}

/** Checks a parsed rule with `self`/`oldSelf` typed by `vars`. */
export function checkRule(e: Expr, vars: Map<string, StaticType>, pos: Record<string, number>): CheckResult {
  let error: CheckResult['error'];
  const fail = (x: Expr, message: string) => {
    error ??= { offset: pos[String(x.id)] ?? 0, message };
  };
  const fromStatic = (t: StaticType): T => (t === 'dyn' ? DYN : { schema: t.schema });
  const asStatic = (t: T): StaticType => (t.schema ? { schema: t.schema } : 'dyn');
  const visit = (x: Expr | undefined, scope: Map<string, T>): T => {
    if (!x || error) return DYN;
    const k = x.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind.case;
        const prim: Record<string, Prim> = {
          int64Value: 'int',
          uint64Value: 'uint',
          doubleValue: 'double',
          stringValue: 'string',
          boolValue: 'bool',
          bytesValue: 'bytes',
          nullValue: 'null_type',
        };
        return c && prim[c] ? { prim: prim[c] } : DYN;
      }
      case 'identExpr':
        return scope.get(k.value.name) ?? DYN;
      case 'selectExpr': {
        const o = visit(k.value.operand, scope);
        if (!o.schema) return k.value.testOnly ? BOOL : DYN;
        const f = selectField(o.schema, k.value.field);
        if (f && !f.found) {
          fail(x, `undefined field '${k.value.field}'`);
          return DYN;
        }
        if (k.value.testOnly) return BOOL;
        if (f?.found) return { schema: f.found };
        return fromStatic(elementOf(asStatic(o)));
      }
      case 'callExpr': {
        const fn = k.value.function;
        if (k.value.target) visit(k.value.target, scope);
        const args = k.value.args.map((a) => visit(a, scope));
        const err = overloadError(fn, args);
        if (err) fail(x, err);
        if (fn === '_[_]') return fromStatic(elementOf(asStatic(args[0])));
        if (fn === '_?_:_') return primOf(args[1]) && primOf(args[1]) === primOf(args[2]) ? args[1] : DYN;
        if (BOOL_FUNCS.has(fn)) return BOOL;
        if (CONVERSIONS[fn] && !k.value.target) return { prim: CONVERSIONS[fn] };
        if (fn === 'size') return { prim: 'int' };
        if (['_+_', '_-_', '_*_', '_/_', '_%_'].includes(fn) && primOf(args[0]) === primOf(args[1]))
          return primOf(args[0]) ? { prim: primOf(args[0]) } : DYN;
        return DYN;
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const range = visit(c.iterRange, scope);
        const inner = new Map(scope);
        inner.set(c.iterVar, fromStatic(iterVarOf(asStatic(range))));
        const accu = visit(c.accuInit, scope);
        inner.set(c.accuVar, primOf(accu) ? accu : DYN);
        visit(c.loopCondition, inner);
        visit(c.loopStep, inner);
        return visit(c.result, inner);
      }
      case 'listExpr':
        for (const el of k.value.elements) visit(el, scope);
        return DYN;
      case 'structExpr':
        for (const en of k.value.entries) visit(en.value, scope);
        return DYN;
      default:
        return DYN;
    }
  };
  const out = visit(e, new Map([...vars].map(([n, t]) => [n, fromStatic(t)])));
  const p = primOf(out);
  return { error, notBool: p !== undefined && p !== 'bool' };
}
