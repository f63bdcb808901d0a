// Running a CRD's compiled rules (compile.ts) on a custom resource, as kube-apiserver does
// (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go, Kubernetes 1.32): every non-null value with
// rules is checked, top-down; `self` is the value, `oldSelf` the old object's value at the same place, which exists
// only where old and new correlate (object properties, map values by key, list-type map items by their keys,
// list-type set items by value; never atomic list items). A transition rule (one that uses `oldSelf`) runs only
// when that old value exists, unless `optionalOldSelf: true`, where `oldSelf` is an optional. Failures become
// kube's field errors: `Invalid value: "<schema type>": <message>` (or Forbidden / Required / Duplicate per
// `reason`), at the rule's location plus its `fieldPath`; the message is `messageExpression`'s value, else
// `message`, else `failed rule: <rule>`; a rule that errors reports `<error> evaluating rule: <rule or message>`.
// On update, a failed rule without oldSelf is ratcheted where the value did not change (kube 1.32's default).
import { isDeepStrictEqual } from 'node:util';
import { isCelError } from '@bufbuild/cel';
import { type FieldError, fieldErrors } from '../errors.ts';
import type { JSONSchemaProps } from '../json-schema.ts';
import type { CompiledNode, CompiledRule } from './compile.ts';
import { PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from './cost.ts';
import { k8sEquals } from './equality.ts';
import { NONE, optionalOf } from './lib-optional.ts';
import { runtimeCost } from './runtime-cost.ts';
import { rootSchema, toCel } from './values.ts';

const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';
const trim = (s: string) => s.trim();
const ruleErrorString = (r: CompiledRule) => trim(r.rule.message || r.rule.rule);
const ruleMessageOrDefault = (r: CompiledRule) =>
  r.rule.message ? trim(r.rule.message) : `failed rule: ${ruleErrorString(r)}`;

/** cel-go's runtime error texts where @bufbuild/cel words them differently. */
function celGoError(message: string): string {
  const m = /^field not found: (.*)$/.exec(message) ?? /^no such key: (.*)$/.exec(message);
  if (m) return `no such key: ${m[1]}`;
  if (/^index out of (bounds|range)/.test(message))
    return message.replace(/^index out of range/, 'index out of bounds');
  return message;
}

function schemaType(s: JSONSchemaProps): string {
  return s.type ?? (s['x-kubernetes-int-or-string'] ? 'integer-or-string' : '');
}

function fieldError(path: string, type: string, detail: string, reason?: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return fieldErrors.forbidden(path, detail);
    case 'FieldValueRequired':
      return fieldErrors.required(path, detail);
    case 'FieldValueDuplicate':
      return fieldErrors.duplicate(path, type);
    default:
      return fieldErrors.invalid(path, type, detail);
  }
}

/**
 * The request's remaining runtime cost budget (RuntimeCELCostBudget). Rules are first charged their estimate (an
 * upper bound of their actual cost); only a request whose estimates exceed the budget is validated again with each
 * rule's actual cost (runtime-cost.ts), so that a typical request pays nothing for the accounting.
 */
interface Budget {
  remaining: number;
  actual: boolean;
  exhausted?: boolean;
}

/** One validation pass over a request's object: where its field errors go and what it may still spend. */
interface Run {
  out: FieldError[];
  budget: Budget;
}

/** Rules estimated this cheap are always charged their estimate. */
const CHEAP = 1000;

/** The rules of one node on one value; false when validation must stop (kube's exhausted budget / bad message). */
function runRules(n: CompiledNode, at0: string, obj: unknown, old: unknown, root: boolean, run: Run): boolean {
  // kube's nil field path (the object's root) prints as <nil>.
  const path = at0 || '<nil>';
  const schema = root ? rootSchema(n.schema) : n.schema;
  const type = schemaType(n.schema);
  if (run.budget.remaining <= 0) {
    run.budget.exhausted = true;
    run.out.push(fieldErrors.invalid(path, type, OUT_OF_BUDGET));
    return false;
  }
  const self = toCel(schema, obj);
  let oldCel: unknown;
  let unchanged: boolean | undefined;
  for (const r of n.rules) {
    if (r.usesOldSelf && old === undefined && !r.rule.optionalOldSelf) continue;
    if (r.usesOldSelf && oldCel === undefined && old !== undefined) oldCel = toCel(schema, old);
    const oldSelf = r.rule.optionalOldSelf
      ? old === undefined
        ? NONE
        : optionalOf(oldCel as never)
      : (oldCel ?? null);
    const vars = { self, oldSelf };
    const actual = r.estimatedCost > CHEAP && (run.budget.actual || r.estimatedCost > PER_CALL_LIMIT);
    const cost = actual ? runtimeCost(r.expr, obj, old) : r.estimatedCost;
    if (cost > PER_CALL_LIMIT) {
      run.out.push(
        fieldErrors.invalid(
          path,
          type,
          `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(r)}`,
        ),
      );
      return false;
    }
    if (cost > run.budget.remaining) {
      run.budget.exhausted = true;
      run.out.push(fieldErrors.invalid(path, type, OUT_OF_BUDGET));
      return false;
    }
    run.budget.remaining -= cost;
    const res = r.program(vars);
    if (isCelError(res)) {
      const msg = celGoError(res.message);
      if (/no matching overload|no such overload/.test(msg))
        run.out.push(
          fieldErrors.invalid(
            path,
            type,
            `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r)}`,
          ),
        );
      else run.out.push(fieldErrors.invalid(path, type, `${msg} evaluating rule: ${ruleErrorString(r)}`));
      continue;
    }
    if (res === true) continue;
    // Ratcheting (CRDValidationRatcheting, on by default since 1.30): on update, a rule that does not use oldSelf
    // does not fail a value equal to its old one (kube sends a warning instead; warnings are not sent here).
    if (!r.usesOldSelf && old !== undefined) {
      unchanged ??= isDeepStrictEqual(obj, old);
      if (unchanged) continue;
    }
    const at = r.fieldPath ? (at0 ? `${at0}${r.fieldPath}` : r.fieldPath.replace(/^\./, '')) : path;
    let detail: string | undefined;
    if (r.message) {
      const m = r.message(vars);
      if (typeof m === 'string') {
        const t = m.trim();
        if (t.length > 5120) {
          run.out.push(fieldErrors.invalid(at, type, 'messageExpression beyond allowable length of 5120'));
          return false;
        }
        if (/[\n\r]/.test(t)) {
          run.out.push(fieldErrors.invalid(at, type, 'messageExpression should not contain line breaks'));
          return false;
        }
        if (!t) {
          run.out.push(fieldErrors.invalid(at, type, 'messageExpression should evaluate to a non-empty string'));
          return false;
        }
        detail = t;
      }
    }
    run.out.push(fieldError(at, type, detail ?? ruleMessageOrDefault(r), r.rule.reason));
  }
  return true;
}

const join = (path: string, k: string) => (path ? `${path}.${k}` : k);

/** Old list items correlated with new ones: list-type map items by key, set items by value; atomic: none. */
function oldItem(n: CompiledNode, item: unknown, oldList: unknown): unknown {
  if (!Array.isArray(oldList)) return undefined;
  const lt = n.schema['x-kubernetes-list-type'];
  if (lt === 'map') {
    const keys = n.schema['x-kubernetes-list-map-keys'] ?? [];
    const key = (x: unknown) => JSON.stringify(keys.map((k) => (x as Record<string, unknown>)?.[k]));
    const want = key(item);
    return oldList.find((o) => key(o) === want);
  }
  if (lt === 'set') {
    const s = n.items?.schema;
    return oldList.find((o) => k8sEquals(toCel(s, o), toCel(s, item)));
  }
  return undefined;
}

function walk(n: CompiledNode, path: string, obj: unknown, old: unknown, root: boolean, run: Run): boolean {
  if (obj === null || obj === undefined) return true;
  if (n.rules.length && !runRules(n, path, obj, old, root, run)) return false;
  for (const sub of n.allOf ?? []) if (!walk(sub, path, obj, old, false, run)) return false;
  if (Array.isArray(obj)) {
    if (n.items)
      for (let i = 0; i < obj.length; i++)
        if (!walk(n.items, `${path}[${i}]`, obj[i], oldItem(n, obj[i], old), false, run)) return false;
    return true;
  }
  if (typeof obj !== 'object') return true;
  const o = obj as Record<string, unknown>;
  const oo = old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
  if (n.properties)
    for (const [k, c] of n.properties)
      if (o[k] !== undefined && !walk(c, join(path, k), o[k], oo?.[k], false, run)) return false;
  if (n.additional)
    for (const k of Object.keys(o))
      if (!n.schema.properties?.[k] && !walk(n.additional, `${path}[${k}]`, o[k], oo?.[k], false, run)) return false;
  return true;
}

/** The field errors of a custom resource's CEL rules (old: the stored object on update). */
export function validateRules(root: CompiledNode | undefined, obj: unknown, old?: unknown): FieldError[] {
  if (!root) return [];
  const estimated: Run = { out: [], budget: { remaining: RUNTIME_CEL_COST_BUDGET, actual: false } };
  walk(root, '', obj, old, true, estimated);
  if (!estimated.budget.exhausted) return estimated.out;
  const exact: Run = { out: [], budget: { remaining: RUNTIME_CEL_COST_BUDGET, actual: true } };
  walk(root, '', obj, old, true, exact);
  return exact.out;
}
