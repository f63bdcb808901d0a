// Field validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding, the rules and messages of
// kube-apiserver 1.32's pkg/apis/admissionregistration/validation/validation.go (ValidateValidatingAdmissionPolicy,
// ValidateValidatingAdmissionPolicyBinding): match resources and their rules, validations (every expression
// must compile: `compilation failed: ...`), audit annotations, messages without line breaks, reasons, failure policy, variables,
// match conditions, paramKind/paramRef, validation actions. Types and enums of single fields are also checked by
// kubernetes-models' validators (validation.ts); this is what they cannot say.
import { type FieldError, fieldErrors } from '../errors.ts';
import { isQualifiedName } from '../names.ts';
import type { K8sObject } from '../store.ts';
import { compileCel } from './cel-env.ts';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const CEL_IDENT = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

function expression(errs: FieldError[], path: string, expr: unknown): void {
  if (typeof expr !== 'string' || !expr.trim()) {
    errs.push(fieldErrors.required(path, `${path.slice(path.lastIndexOf('.') + 1)} is not specified`));
    return;
  }
  const c = compileCel(expr);
  if ('error' in c) errs.push(fieldErrors.invalid(path, expr, c.error));
}

/** validateRuleWithOperations / validateRule: `*` alone, operations known, resources required. */
function rules(errs: FieldError[], path: string, list: any[] | undefined, required: boolean): void {
  if (required && !list?.length) errs.push(fieldErrors.required(path, ''));
  (list ?? []).forEach((r: any, i: number) => {
    const p = `${path}[${i}]`;
    const ops: string[] = r?.operations ?? [];
    if (!ops.length) errs.push(fieldErrors.required(`${p}.operations`, ''));
    if (ops.length > 1 && ops.includes('*'))
      errs.push(fieldErrors.invalid(`${p}.operations`, ops, "if '*' is present, must not specify other operations"));
    ops.forEach((o, j) => {
      if (!OPERATIONS.includes(o)) errs.push(fieldErrors.notSupported(`${p}.operations[${j}]`, o, OPERATIONS));
    });
    for (const [f, what] of [
      ['apiGroups', 'API groups'],
      ['apiVersions', 'API versions'],
    ] as const) {
      const v: string[] = r?.[f] ?? [];
      if (!v.length) errs.push(fieldErrors.required(`${p}.${f}`, ''));
      if (v.length > 1 && v.includes('*'))
        errs.push(fieldErrors.invalid(`${p}.${f}`, v, `if '*' is present, must not specify other ${what}`));
    }
    const res: string[] = r?.resources ?? [];
    if (!res.length) errs.push(fieldErrors.required(`${p}.resources`, ''));
    if (r?.scope !== undefined && !['Cluster', 'Namespaced', '*'].includes(r.scope))
      errs.push(fieldErrors.notSupported(`${p}.scope`, r.scope, ['Cluster', 'Namespaced', '*']));
  });
}

function matchResources(errs: FieldError[], path: string, m: any, policy: boolean): void {
  if (!m) {
    if (policy) errs.push(fieldErrors.required(path, ''));
    return;
  }
  if (m.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(m.matchPolicy))
    errs.push(fieldErrors.notSupported(`${path}.matchPolicy`, m.matchPolicy, ['Equivalent', 'Exact']));
  rules(errs, `${path}.resourceRules`, m.resourceRules, policy);
  rules(errs, `${path}.excludeResourceRules`, m.excludeResourceRules, false);
}

function nameList(errs: FieldError[], path: string, list: any[] | undefined, check: (n: string) => string[]): void {
  const seen = new Set<string>();
  (list ?? []).forEach((x: any, i: number) => {
    const name = x?.name;
    if (!name) errs.push(fieldErrors.required(`${path}[${i}].name`, ''));
    else {
      for (const m of check(name)) errs.push(fieldErrors.invalid(`${path}[${i}].name`, name, m));
      if (seen.has(name)) errs.push(fieldErrors.duplicate(`${path}[${i}].name`, name));
      seen.add(name);
    }
    expression(errs, `${path}[${i}].expression`, x?.expression);
  });
}

/** validateAuditAnnotation: `<policy name>/<key>` a qualified name, keys unique, valueExpression compiling. */
function auditAnnotations(errs: FieldError[], name: string, list: any[] | undefined): void {
  const seen = new Set<string>();
  (list ?? []).forEach((a: any, i: number) => {
    const p = `spec.auditAnnotations[${i}]`;
    const key = String(a?.key ?? '');
    for (const m of isQualifiedName(`${name}/${key}`)) errs.push(fieldErrors.invalid(`${p}.key`, `${name}/${key}`, m));
    if (seen.has(key)) errs.push(fieldErrors.duplicate(`${p}.key`, key));
    seen.add(key);
    if (typeof a?.valueExpression !== 'string' || !a.valueExpression.trim())
      errs.push(fieldErrors.required(`${p}.valueExpression`, 'valueExpression is not specified'));
    else expression(errs, `${p}.valueExpression`, a.valueExpression);
  });
}

/** ValidateValidatingAdmissionPolicy (spec only; metadata is checked by the caller). */
export function validatePolicy(obj: K8sObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = obj.spec ?? {};
  if (s.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(s.failurePolicy))
    errs.push(fieldErrors.notSupported('spec.failurePolicy', s.failurePolicy, ['Fail', 'Ignore']));
  if (s.paramKind) {
    if (!s.paramKind.apiVersion) errs.push(fieldErrors.required('spec.paramKind.apiVersion', ''));
    if (!s.paramKind.kind) errs.push(fieldErrors.required('spec.paramKind.kind', ''));
  }
  matchResources(errs, 'spec.matchConstraints', s.matchConstraints, true);
  if (!s.validations?.length && !s.auditAnnotations?.length)
    errs.push(
      fieldErrors.required('spec.validations', 'validations or auditAnnotations must contain at least one item'),
    );
  (s.validations ?? []).forEach((v: any, i: number) => {
    const p = `spec.validations[${i}]`;
    expression(errs, `${p}.expression`, v?.expression);
    if (typeof v?.message === 'string') {
      const trimmed = v.message.trim();
      if (trimmed.includes('\n'))
        errs.push(fieldErrors.invalid(`${p}.message`, v.message, 'message must not contain line breaks'));
      else if (v.message.length && !trimmed)
        errs.push(fieldErrors.invalid(`${p}.message`, v.message, 'message must be non-empty if specified'));
    }
    if (v?.messageExpression !== undefined) expression(errs, `${p}.messageExpression`, v.messageExpression);
    if (v?.reason !== undefined && !REASONS.includes(v.reason))
      errs.push(fieldErrors.notSupported(`${p}.reason`, v.reason, REASONS));
  });
  auditAnnotations(errs, obj.metadata.name ?? '', s.auditAnnotations);
  nameList(errs, 'spec.matchConditions', s.matchConditions, (n) => isQualifiedName(n));
  if ((s.matchConditions ?? []).length > 64)
    errs.push(fieldErrors.invalid('spec.matchConditions', s.matchConditions.length, 'must have at most 64 items'));
  nameList(errs, 'spec.variables', s.variables, (n) =>
    CEL_IDENT.test(n) ? [] : ['name is not a valid CEL identifier'],
  );
  return errs;
}

/** ValidateValidatingAdmissionPolicyBinding. */
export function validateBinding(obj: K8sObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = obj.spec ?? {};
  if (!s.policyName) errs.push(fieldErrors.required('spec.policyName', ''));
  const actions: string[] = s.validationActions ?? [];
  if (!actions.length)
    errs.push(fieldErrors.required('spec.validationActions', 'at least one validation action is required'));
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!['Deny', 'Warn', 'Audit'].includes(a))
      errs.push(fieldErrors.notSupported(`spec.validationActions[${i}]`, a, ['Audit', 'Deny', 'Warn']));
    if (seen.has(a)) errs.push(fieldErrors.duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      fieldErrors.invalid(
        'spec.validationActions',
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  const ref = s.paramRef;
  if (ref) {
    if (ref.name && ref.selector)
      errs.push(fieldErrors.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
    if (ref.parameterNotFoundAction === undefined)
      errs.push(fieldErrors.required('spec.paramRef.parameterNotFoundAction', ''));
    else if (!['Allow', 'Deny'].includes(ref.parameterNotFoundAction))
      errs.push(
        fieldErrors.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, [
          'Allow',
          'Deny',
        ]),
      );
  }
  matchResources(errs, 'spec.matchResources', s.matchResources, false);
  return errs;
}
