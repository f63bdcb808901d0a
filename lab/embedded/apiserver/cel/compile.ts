// Compiling a CRD schema's `x-kubernetes-validations`, once, when the CRD is stored (kube-apiserver:
// k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go and the CRD validation in
// pkg/apis/apiextensions/validation/validation.go, Kubernetes 1.32). Every rule is parsed and planned on the
// Kubernetes environment (env.ts), checked against the schema's declared fields (`undefined field 'x'`, as kube's
// type checker reports it), and its cost estimated (cost.ts). Each problem becomes the field error kube-apiserver
// returns for the CRD, at the rule's path (`spec.versions[0].schema.openAPIV3Schema.properties[spec]
// .x-kubernetes-validations[0].rule`); a CRD with any of them is refused. The result, a tree of compiled rules that
// mirrors the schema where rules exist, is what validate.ts runs for every request.
import { type CelResult, CelScalar, plan } from '@bufbuild/cel';
import { type FieldError, fieldErrors } from '../errors.ts';
import type { JSONSchemaProps } from '../json-schema.ts';
import { checkRule } from './check.ts';
import {
  costErrorMessage,
  estimateCost,
  maxSize,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './cost.ts';
import { kubernetesCelEnv } from './env.ts';
import { type ParsedExpr, parseCel } from './parse.ts';
import type { Expr, StaticType } from './types.ts';
import { rootSchema } from './values.ts';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

type Program = (vars: { self: unknown; oldSelf: unknown }) => CelResult;

export interface CompiledRule {
  rule: ValidationRule;
  program: Program;
  /** The parsed rule and its estimated cost (the runtime cost is computed from it, runtime-cost.ts). */
  expr: Expr;
  estimatedCost: number;
  usesOldSelf: boolean;
  message?: Program;
  /** The field path suffix of `fieldPath` (`.foo[bar]`), appended to the rule's location in errors. */
  fieldPath?: string;
}

/** The compiled rules of a schema node and of the nodes below it that have rules. */
export interface CompiledNode {
  schema: JSONSchemaProps;
  rules: CompiledRule[];
  properties?: Map<string, CompiledNode>;
  items?: CompiledNode;
  additional?: CompiledNode;
  allOf?: CompiledNode[];
}

const env = kubernetesCelEnv({ self: CelScalar.DYN, oldSelf: CelScalar.DYN });
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

/** Go's %#v of the rule, as kube-apiserver prints the value of a rule that does not compile. */
function goRule(r: ValidationRule): string {
  const q = (s?: string) => JSON.stringify(s ?? '');
  const ptr = (t: string, v: unknown) => (v === undefined ? `(*${t})(nil)` : `(*${t})(0xc000000000)`);
  return `apiextensions.ValidationRule{Rule:${q(r.rule)}, Message:${q(r.message)}, MessageExpression:${q(r.messageExpression)}, Reason:${ptr('apiextensions.FieldValueErrorReason', r.reason)}, FieldPath:${q(r.fieldPath)}, OptionalOldSelf:${ptr('bool', r.optionalOldSelf)}}`;
}

function located(src: string, offset: number, msg: string): string {
  const before = src.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  const text = src.split('\n')[line - 1];
  return `ERROR: <input>:${line}:${col}: ${msg}\n | ${text}\n | ${'.'.repeat(col - 1)}^`;
}

function usesIdent(e: Expr | undefined, name: string): boolean {
  if (!e) return false;
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr':
      return k.value.name === name;
    case 'selectExpr':
      return usesIdent(k.value.operand, name);
    case 'callExpr':
      return usesIdent(k.value.target, name) || k.value.args.some((a) => usesIdent(a, name));
    case 'comprehensionExpr': {
      const c = k.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].some((x) => usesIdent(x, name));
    }
    case 'listExpr':
      return k.value.elements.some((x) => usesIdent(x, name));
    case 'structExpr':
      return k.value.entries.some((x) => usesIdent(x.value, name));
    default:
      return false;
  }
}

/** A `fieldPath` (`.a.b`, `['k']`) as a field-path suffix, checked against the schema (kube's ValidFieldPath). */
function normalizeFieldPath(fp: string, s: JSONSchemaProps): string | Error {
  let out = '';
  let cur: JSONSchemaProps | undefined = s;
  const re = /\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  // biome-ignore lint/suspicious/noAssignInExpressions: a scanner loop
  while ((m = re.exec(fp))) {
    at = re.lastIndex;
    const name = m[1] ?? m[2].replace(/\\(.)/g, '$1');
    if (!cur) return new Error('does not refer to a valid field');
    if (cur.properties) {
      if (!cur.properties[name]) return new Error('does not refer to a valid field');
      cur = cur.properties[name];
      out += `.${name}`;
    } else if (typeof cur.additionalProperties === 'object') {
      cur = cur.additionalProperties;
      out += `[${name}]`;
    } else return new Error('does not refer to a valid field');
  }
  if (at !== fp.length || !fp) return new Error(`invalid JSON path`);
  return out;
}

interface Ctx {
  errors: FieldError[];
  total: number;
}

function compileRules(s: JSONSchemaProps, path: string, root: boolean, cardinality: number, ctx: Ctx): CompiledRule[] {
  const rules = (s['x-kubernetes-validations'] ?? []) as ValidationRule[];
  const out: CompiledRule[] = [];
  const scoped = root ? rootSchema(s) : s;
  rules.forEach((r, i) => {
    const rp = `${path}.x-kubernetes-validations[${i}]`;
    if (!r.rule) {
      ctx.errors.push(fieldErrors.required(`${rp}.rule`));
      return;
    }
    let parsed: ParsedExpr;
    try {
      parsed = parseCel(r.rule);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      ctx.errors.push({
        field: `${rp}.rule`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${goRule(r)}: compilation failed: ERROR: ${msg}`,
      });
      return;
    }
    const usesOldSelf = usesIdent(parsed.expr, 'oldSelf');
    const t: StaticType = { schema: scoped };
    const checked = checkRule(
      parsed.expr,
      new Map<string, StaticType>([
        ['self', t],
        ['oldSelf', r.optionalOldSelf ? 'dyn' : t],
      ]),
      (parsed.sourceInfo?.positions ?? {}) as Record<string, number>,
    );
    const fieldErr = checked.error && located(r.rule, checked.error.offset, checked.error.message);
    if (checked.notBool && !fieldErr) {
      ctx.errors.push({
        field: `${rp}.rule`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${goRule(r)}: cel expression must evaluate to a bool`,
      });
      return;
    }
    if (fieldErr) {
      ctx.errors.push({
        field: `${rp}.rule`,
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${goRule(r)}: compilation failed: ${fieldErr}`,
      });
      return;
    }
    if (r.optionalOldSelf && !usesOldSelf)
      ctx.errors.push(
        fieldErrors.invalid(`${rp}.optionalOldSelf`, true, 'may not be set if oldSelf is not used in rule'),
      );
    const cost = estimateCost(parsed.expr, scoped);
    if (cost > STATIC_ESTIMATED_COST_LIMIT)
      ctx.errors.push(
        fieldErrors.forbidden(`${rp}.rule`, costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)),
      );
    ctx.total += cost * cardinality;
    if (r.reason !== undefined && !REASONS.includes(r.reason))
      ctx.errors.push(fieldErrors.notSupported(`${rp}.reason`, r.reason, REASONS));
    let fieldPath: string | undefined;
    if (r.fieldPath) {
      const fp = normalizeFieldPath(r.fieldPath, s);
      if (fp instanceof Error)
        ctx.errors.push(
          fieldErrors.invalid(`${rp}.fieldPath`, r.fieldPath, `fieldPath must be a valid path: ${fp.message}`),
        );
      else fieldPath = fp;
    }
    let message: Program | undefined;
    if (r.messageExpression) {
      try {
        message = plan(env, parseCel(r.messageExpression)) as Program;
      } catch (e) {
        ctx.errors.push(
          fieldErrors.invalid(
            `${rp}.messageExpression`,
            r.messageExpression,
            `messageExpression compilation failed: ERROR: ${e instanceof Error ? e.message : e}`,
          ),
        );
      }
    }
    out.push({
      rule: r,
      program: plan(env, parsed) as Program,
      expr: parsed.expr,
      estimatedCost: cost,
      usesOldSelf,
      message,
      fieldPath,
    });
  });
  return out;
}

function compileNode(
  s: JSONSchemaProps | undefined,
  path: string,
  root: boolean,
  cardinality: number,
  ctx: Ctx,
): CompiledNode | undefined {
  if (!s || typeof s !== 'object') return undefined;
  const node: CompiledNode = { schema: s, rules: compileRules(s, path, root, cardinality, ctx) };
  let any = node.rules.length > 0;
  for (const [k, ps] of Object.entries(s.properties ?? {})) {
    if (root && k === 'metadata') continue;
    const c = compileNode(ps, `${path}.properties[${k}]`, false, cardinality, ctx);
    if (c) {
      node.properties ??= new Map();
      node.properties.set(k, c);
      any = true;
    }
  }
  if (s.items) {
    node.items = compileNode(s.items, `${path}.items`, false, cardinality * maxSize(s), ctx);
    any ||= !!node.items;
  }
  if (typeof s.additionalProperties === 'object') {
    node.additional = compileNode(
      s.additionalProperties,
      `${path}.additionalProperties`,
      false,
      cardinality * maxSize(s),
      ctx,
    );
    any ||= !!node.additional;
  }
  (s.allOf ?? []).forEach((sub, i) => {
    const c = compileNode(sub, `${path}.allOf[${i}]`, false, cardinality, ctx);
    if (c) {
      node.allOf ??= [];
      node.allOf.push(c);
      any = true;
    }
  });
  return any ? node : undefined;
}

export interface CompiledSchema {
  root?: CompiledNode;
  errors: FieldError[];
}

const cache = new Map<string, CompiledSchema>();

/**
 * The compiled rules of a CRD version's openAPIV3Schema; `path` is where the schema sits in the CRD
 * (`spec.versions[0].schema.openAPIV3Schema`). Compiled once per distinct schema, cached by its JSON alone: the CRD's
 * validation on write and the served resource share the result, and so do a CRD's versions that carry the same
 * schema (Gateway API's v1 and v1beta1 of Gateway, HTTPRoute, GatewayClass, ReferenceGrant: half the rules of the
 * bundle). The path only prefixes the errors' fields.
 */
export function compileSchema(schema: JSONSchemaProps | undefined, path: string): CompiledSchema {
  if (!schema) return { errors: [] };
  const key = JSON.stringify(schema);
  let compiled = cache.get(key);
  if (!compiled) {
    // Compiled at the path '': the errors' fields are relative (`.properties[spec]...`), prefixed per caller below.
    const ctx: Ctx = { errors: [], total: 0 };
    const root = compileNode(schema, '', true, 1, ctx);
    if (ctx.total > STATIC_ESTIMATED_CRD_COST_LIMIT)
      ctx.errors.push(
        fieldErrors.forbidden(
          '',
          costErrorMessage(
            'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
            ctx.total,
            STATIC_ESTIMATED_CRD_COST_LIMIT,
          ),
        ),
      );
    compiled = { root, errors: ctx.errors };
    if (cache.size > 200) cache.clear();
    cache.set(key, compiled);
  }
  if (compiled.errors.length === 0) return compiled;
  return { root: compiled.root, errors: compiled.errors.map((e) => ({ ...e, field: path + e.field })) };
}
