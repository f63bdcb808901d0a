// Field validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding, the rules and messages of
// kube-apiserver 1.32's pkg/apis/admissionregistration/validation/validation.go (ValidateValidatingAdmissionPolicy,
// ValidateValidatingAdmissionPolicyBinding): match resources and their rules, validations (every expression
// must compile: `compilation failed: ...`), audit annotations, messages without line breaks, reasons, failure policy, variables,
// match conditions, paramKind/paramRef, validation actions. Types and enums of single fields are also checked by
// kubernetes-models' validators (validation.ts); this is what they cannot say. Each kind of expression declares the
// variables upstream's compiler declares for it: `params` only with a paramKind, `variables` only with variables,
// `authorizer` everywhere but in messageExpressions.
import { type FieldError, fieldErrors } from '../errors.ts';
import { isDNS1123Subdomain, isQualifiedName, isValidPathSegmentName } from '../names.ts';
import type { K8sObject } from '../store.ts';
import { compileCel } from './cel-env.ts';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const CEL_IDENT = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);
const ONE_OF = 'validations or auditAnnotations must contain at least one item';

/** An expression: Required (with `required`'s detail) when blank, Invalid with the compiler's message. */
function expression(errs: FieldError[], path: string, expr: unknown, declared: string[], required = ''): void {
  if (typeof expr !== 'string' || !expr.trim()) {
    errs.push(fieldErrors.required(path, required));
    return;
  }
  const c = compileCel(expr, declared);
  if ('error' in c) errs.push(fieldErrors.invalid(path, expr, c.error));
}

/** validateRuleWithOperations / validateRule: `*` alone, operations known, resources required. */
function rules(errs: FieldError[], path: string, list: any[] | undefined): void {
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
    if (!(r?.resources ?? []).length) errs.push(fieldErrors.required(`${p}.resources`, ''));
    const names = new Set<string>();
    (r?.resourceNames ?? []).forEach((n: string, j: number) => {
      for (const m of isValidPathSegmentName(n)) errs.push(fieldErrors.invalid(`${p}.resourceNames[${j}]`, n, m));
      if (names.has(n)) errs.push(fieldErrors.duplicate(`${p}.resourceNames[${j}]`, n));
      names.add(n);
    });
    if (r?.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(r.scope))
      errs.push(fieldErrors.notSupported(`${p}.scope`, r.scope, ['*', 'Cluster', 'Namespaced']));
  });
}

/** validateMatchResources (defaulting has filled matchPolicy and the selectors). */
function matchResources(errs: FieldError[], path: string, m: any): void {
  if (!m) return;
  if (m.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(m.matchPolicy))
    errs.push(fieldErrors.notSupported(`${path}.matchPolicy`, m.matchPolicy, ['Equivalent', 'Exact']));
  rules(errs, `${path}.resourceRules`, m.resourceRules);
  rules(errs, `${path}.excludeResourceRules`, m.excludeResourceRules);
}

/** Match conditions: at most 64, names qualified and unique, expressions required and compiling. */
function matchConditions(errs: FieldError[], list: any[] | undefined, declared: string[]): void {
  if ((list ?? []).length > 64)
    errs.push(fieldErrors.invalid('spec.matchConditions', list!.length, 'must have at most 64 items'));
  const seen = new Set<string>();
  (list ?? []).forEach((c: any, i: number) => {
    const p = `spec.matchConditions[${i}]`;
    expression(errs, `${p}.expression`, c?.expression, declared);
    if (!c?.name) errs.push(fieldErrors.required(`${p}.name`, ''));
    else for (const m of isQualifiedName(c.name)) errs.push(fieldErrors.invalid(`${p}.name`, c.name, m));
    if (c?.name && seen.has(c.name)) errs.push(fieldErrors.duplicate(`${p}.name`, c.name));
    if (c?.name) seen.add(c.name);
  });
}

function variables(errs: FieldError[], list: any[] | undefined, declared: string[]): void {
  (list ?? []).forEach((v: any, i: number) => {
    const p = `spec.variables[${i}]`;
    const name = String(v?.name ?? '');
    if (!name.trim()) errs.push(fieldErrors.required(`${p}.name`, 'name is not specified'));
    else if (!CEL_IDENT.test(name) || CEL_RESERVED.has(name))
      errs.push(fieldErrors.invalid(`${p}.name`, name, 'name is not a valid CEL identifier'));
    expression(errs, `${p}.expression`, v?.expression, declared, 'expression is not specified');
  });
}

function validation(errs: FieldError[], v: any, i: number, declared: string[], forMessages: string[]): void {
  const p = `spec.validations[${i}]`;
  expression(errs, `${p}.expression`, v?.expression, declared, 'expression is not specified');
  const me = v?.messageExpression;
  if (typeof me === 'string' && me.length && !me.trim())
    errs.push(fieldErrors.invalid(`${p}.messageExpression`, me, 'must be non-empty if specified'));
  else if (typeof me === 'string' && me.trim()) expression(errs, `${p}.messageExpression`, me, forMessages);
  if (typeof v?.message === 'string') {
    const trimmed = v.message.trim();
    if (v.message.length && !trimmed)
      errs.push(fieldErrors.invalid(`${p}.message`, v.message, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(trimmed))
      errs.push(fieldErrors.invalid(`${p}.message`, v.message, 'message must not contain line breaks'));
  }
  if (v?.reason !== undefined && !REASONS.includes(v.reason))
    errs.push(fieldErrors.notSupported(`${p}.reason`, v.reason, REASONS));
}

/** validateAuditAnnotation: `<policy name>/<key>` a qualified name, keys unique, valueExpression compiling. */
function auditAnnotations(errs: FieldError[], name: string, list: any[] | undefined, declared: string[]): void {
  const seen = new Set<string>();
  (list ?? []).forEach((a: any, i: number) => {
    const p = `spec.auditAnnotations[${i}]`;
    const key = String(a?.key ?? '');
    for (const m of isQualifiedName(`${name}/${key}`)) errs.push(fieldErrors.invalid(`${p}.key`, `${name}/${key}`, m));
    expression(errs, `${p}.valueExpression`, a?.valueExpression, declared, 'valueExpression is not specified');
    if (seen.has(key)) errs.push(fieldErrors.duplicate(`${p}.key`, key));
    seen.add(key);
  });
}

/** The variables an expression of this policy may name (upstream's OptionalVariableDeclarations). */
function declarations(s: any): { all: string[]; messages: string[] } {
  const base = ['object', 'oldObject', 'request', 'namespaceObject'];
  if (s.paramKind) base.push('params');
  if ((s.variables ?? []).length) base.push('variables');
  return { all: [...base, 'authorizer'], messages: base };
}

/** validateValidatingAdmissionPolicySpec (metadata is checked by the caller). */
export function validatePolicy(obj: K8sObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = obj.spec ?? {};
  const declared = declarations(s);
  if (s.failurePolicy === undefined) errs.push(fieldErrors.required('spec.failurePolicy', ''));
  else if (!['Fail', 'Ignore'].includes(s.failurePolicy))
    errs.push(fieldErrors.notSupported('spec.failurePolicy', s.failurePolicy, ['Fail', 'Ignore']));
  if (s.paramKind) {
    if (!s.paramKind.apiVersion) errs.push(fieldErrors.required('spec.paramKind.apiVersion', ''));
    if (!s.paramKind.kind) errs.push(fieldErrors.required('spec.paramKind.kind', ''));
  }
  if (!s.matchConstraints) errs.push(fieldErrors.required('spec.matchConstraints', ''));
  else {
    matchResources(errs, 'spec.matchConstraints', s.matchConstraints);
    // At least one resource rule, to give the expressions type information.
    if (!(s.matchConstraints.resourceRules ?? []).length)
      errs.push(fieldErrors.required('spec.matchConstraints.resourceRules', ''));
  }
  matchConditions(errs, s.matchConditions, declared.all);
  variables(errs, s.variables, declared.all);
  if (!s.validations?.length && !s.auditAnnotations?.length) {
    errs.push(fieldErrors.required('spec.validations', ONE_OF));
    errs.push(fieldErrors.required('spec.auditAnnotations', ONE_OF));
  } else {
    (s.validations ?? []).forEach((v: any, i: number) => {
      validation(errs, v, i, declared.all, declared.messages);
    });
    auditAnnotations(errs, obj.metadata.name ?? '', s.auditAnnotations, declared.all);
  }
  return errs;
}

/** validateValidatingAdmissionPolicyBindingSpec. */
export function validateBinding(obj: K8sObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = obj.spec ?? {};
  if (!s.policyName) errs.push(fieldErrors.required('spec.policyName', ''));
  else
    for (const m of isDNS1123Subdomain(s.policyName))
      errs.push(fieldErrors.invalid('spec.policyName', s.policyName, m));
  paramRef(errs, s.paramRef);
  matchResources(errs, 'spec.matchResources', s.matchResources);
  const actions: string[] = s.validationActions ?? [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!['Audit', 'Deny', 'Warn'].includes(a))
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
  if (!seen.size)
    errs.push(fieldErrors.required('spec.validationActions', 'at least one validation action is required'));
  return errs;
}

function paramRef(errs: FieldError[], ref: any): void {
  if (!ref) return;
  const p = 'spec.paramRef';
  if (ref.name) {
    for (const m of isValidPathSegmentName(ref.name)) errs.push(fieldErrors.invalid(`${p}.name`, ref.name, m));
    if (ref.selector) errs.push(fieldErrors.forbidden(`${p}.name`, 'name and selector are mutually exclusive'));
  }
  if (ref.selector && ref.name)
    errs.push(fieldErrors.forbidden(`${p}.selector`, 'name and selector are mutually exclusive'));
  if (!ref.name && !ref.selector) errs.push(fieldErrors.required(p, 'one of name or selector must be specified'));
  if (!ref.parameterNotFoundAction) errs.push(fieldErrors.required(`${p}.parameterNotFoundAction`, ''));
  else if (!['Deny', 'Allow'].includes(ref.parameterNotFoundAction))
    errs.push(fieldErrors.notSupported(`${p}.parameterNotFoundAction`, ref.parameterNotFoundAction, ['Deny', 'Allow']));
}
