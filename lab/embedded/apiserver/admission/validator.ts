// One policy evaluated for one request and one param, as k8s.io/apiserver pkg/admission/plugin/policy/validating/
// validator.go: match conditions first (any false: the policy does not apply; an error: the failure policy), then
// the variables (in order, each seeing the ones before), then every validation: true admits; false denies with the
// messageExpression's result (a string without line breaks), else `message`, else `failed expression: <expr>`, and
// the validation's reason (default Invalid); an evaluation error applies the failure policy (Fail: deny with
// `expression '<expr>' resulted in error: <err>`, Ignore: admit); then the audit annotations' value expressions.
import { authorizerValue } from './authorizer.ts';
import { celErrorText, toCel } from './cel-env.ts';
import type { Compiled, CompiledPolicy } from './compiled.ts';
import type { AdmissionRequest } from './matching.ts';

export interface Decision {
  action: 'Admit' | 'Deny';
  message: string;
  reason?: string;
}

/** The CEL activation of a request: object, oldObject, authorizer and request (params and namespaceObject are added per binding). */
export function requestVars(req: AdmissionRequest): Record<string, unknown> {
  const { rt } = req;
  const kind = { group: rt.group, version: rt.version, kind: rt.kind };
  const resource = { group: rt.group, version: rt.version, resource: rt.plural };
  const u = req.user;
  return {
    object: req.object ? toCel(req.object) : null,
    oldObject: req.oldObject ? toCel(req.oldObject) : null,
    authorizer: authorizerValue(req),
    request: {
      kind,
      resource,
      subResource: req.subresource ?? '',
      requestKind: kind,
      requestResource: resource,
      requestSubResource: req.subresource ?? '',
      name: req.name,
      namespace: req.namespace ?? '',
      operation: req.operation,
      userInfo: {
        username: u?.username ?? '',
        uid: u?.uid ?? '',
        groups: u?.groups ?? [],
        extra: u?.extra ?? {},
      },
      dryRun: req.dryRun,
    },
  };
}

function evaluate(c: Compiled, vars: Record<string, unknown>): { value: unknown } | { error: string } {
  if ('error' in c) return { error: c.error };
  try {
    const value = c.program(vars);
    const err = celErrorText(value);
    return err === undefined ? { value } : { error: err };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const onError = (p: CompiledPolicy, message: string): Decision =>
  p.failurePolicy === 'Ignore' ? { action: 'Admit', message } : { action: 'Deny', message };

export interface ValidateResult {
  decisions: Decision[];
  /** Audit annotations to publish (`<policy>/<key>` → value). */
  annotations: Record<string, string>;
  /** Audit annotations that failed under failurePolicy Fail: denials whatever the binding's actions. */
  annotationErrors: string[];
}

/**
 * The audit annotations (validator.go): a non-empty string is published as `<policy>/<key>`, null or blank is not,
 * another type or an error is a failure (failurePolicy Fail: a denial, dispatcher.go's AuditAnnotationActionError).
 */
function auditAnnotations(p: CompiledPolicy, scope: Record<string, unknown>, out: ValidateResult): void {
  for (const a of p.auditAnnotations) {
    const r = evaluate(a.compiled, scope);
    let error: string | undefined;
    if ('error' in r) error = `valueExpression '${a.valueExpression}' resulted in error: ${r.error}`;
    else if (typeof r.value === 'string') {
      if (r.value.trim()) out.annotations[`${p.name}/${a.key}`] = r.value.trim();
    } else if (r.value !== null)
      error = `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${typeof r.value === 'bigint' ? 'int' : typeof r.value}. Return type must be either string or null.`;
    if (error && p.failurePolicy === 'Fail') out.annotationErrors.push(error);
  }
}

export function validate(p: CompiledPolicy, vars: Record<string, unknown>): ValidateResult {
  const out: ValidateResult = { decisions: [], annotations: {}, annotationErrors: [] };
  out.decisions = decide(p, vars, out);
  return out;
}

function decide(p: CompiledPolicy, vars: Record<string, unknown>, out: ValidateResult): Decision[] {
  // matchconditions/matcher.go: any false skips the policy; otherwise errors aggregate (utilerrors.NewAggregate).
  const matchErrors: string[] = [];
  for (const m of p.matchConditions) {
    const r = evaluate(m.compiled, vars);
    if ('error' in r) matchErrors.push(`expression '${m.expression}' resulted in error: ${r.error}`);
    else if (r.value !== true) return [];
  }
  if (matchErrors.length)
    return [onError(p, matchErrors.length === 1 ? matchErrors[0] : `[${matchErrors.join(', ')}]`)];
  const variables: Record<string, unknown> = {};
  const scope = { ...vars, variables };
  for (const v of p.variables) {
    const r = evaluate(v.compiled, scope);
    if ('value' in r) variables[v.name] = r.value;
  }
  const decisions = p.validations.map((v): Decision => {
    const r = evaluate(v.compiled, scope);
    if ('error' in r) return onError(p, `expression '${v.expression}' resulted in error: ${r.error}`);
    if (r.value === true) return { action: 'Admit', message: '' };
    let message = '';
    if (v.messageExpression) {
      const m = evaluate(v.messageExpression, scope);
      if ('value' in m && typeof m.value === 'string' && !m.value.includes('\n') && m.value.length <= 5 * 1024)
        message = m.value.trim();
    }
    if (!message && v.message) message = v.message.trim();
    if (!message) message = `failed expression: ${v.expression.trim()}`;
    return { action: 'Deny', message, reason: v.reason ?? 'Invalid' };
  });
  auditAnnotations(p, scope, out);
  return decisions;
}
