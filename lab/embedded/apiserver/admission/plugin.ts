// The ValidatingAdmissionPolicy admission plugin of the write path (core.ts calls `admit` for every create, update
// and delete, dry runs too, after the kind's own validation and before storage), as k8s.io/apiserver pkg/admission/
// plugin/policy/validating/dispatcher.go: each policy whose matchConstraints select the request, each of its
// bindings whose matchResources do, each param the binding's paramRef selects (ConfigMap, CR, ... by name or
// selector; parameterNotFoundAction); decisions go to the binding's validationActions: Deny → the first denial is
// the request's answer (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>'
// denied request: <message>`, code by reason), Warn → a `Warning` header, Audit → a log line carrying the
// `validation.policy.admission.k8s.io/validation_failure` value. Configuration errors (an expression that does not
// compile, a paramKind not served, a missing param with Deny) deny under failurePolicy Fail.
// Writes to admissionregistration.k8s.io resources are exempt, as kube-apiserver exempts them.
import type { Logger } from '../../../../system/shared/log.ts';
import { matchesLabelSelector } from '../../../../system/shared/selectors.ts';
import { ApiError, qualifiedResource } from '../errors.ts';
import type { ResourceRegistry } from '../resources.ts';
import type { K8sObject, Store } from '../store.ts';
import { type AuthorizeFn, withAuthorizer } from './authorizer.ts';
import { toCel } from './cel-env.ts';
import { type CompiledPolicy, PolicyCache } from './compiled.ts';
import { type AdmissionRequest, type MatchContext, matchesResources } from './matching.ts';
import { typeCheck } from './type-check.ts';
import { type Decision, requestVars, validate } from './validator.ts';

const POLICIES = 'admissionregistration.k8s.io/validatingadmissionpolicies';
const BINDINGS = 'admissionregistration.k8s.io/validatingadmissionpolicybindings';
const CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

interface Denial {
  policy: string;
  binding?: string;
  decision: Decision;
}

export class ValidatingAdmission {
  private readonly store: Store;
  private readonly registry: ResourceRegistry;
  private readonly log?: Logger;
  private readonly cache = new PolicyCache();
  private readonly ctx: MatchContext;

  private readonly authorize: AuthorizeFn;

  /** `authorize`: the RBAC decision the `authorizer` variable's checks get (rbac.ts Authorizer.allowed). */
  constructor(store: Store, registry: ResourceRegistry, authorize: AuthorizeFn, log?: Logger) {
    this.store = store;
    this.registry = registry;
    this.authorize = authorize;
    this.log = log;
    this.ctx = {
      registry,
      namespaceLabels: (n) => store.get('core/namespaces', n)?.metadata.labels as Record<string, string> | undefined,
    };
  }

  /** Throws the denial; adds Warn actions' warnings to `warnings`. */
  admit(req: AdmissionRequest, warnings: string[]): void {
    if (!this.store.count(POLICIES) || !this.store.count(BINDINGS)) return;
    if (req.rt.builtin && req.rt.group === 'admissionregistration.k8s.io') return;
    const denials: Denial[] = [];
    const bindings = this.store.list(BINDINGS);
    let vars: Record<string, unknown> | undefined;
    const base = () => {
      vars ??= requestVars(req);
      return vars;
    };
    for (const p of this.cache.sync(this.store.list(POLICIES))) {
      if (!matchesResources(p.spec.matchConstraints ?? {}, req, this.ctx)) continue;
      const mine = bindings.filter((b) => b.spec?.policyName === p.name);
      if (!mine.length) continue;
      if (p.configError) {
        if (p.failurePolicy === 'Fail')
          denials.push({ policy: p.name, decision: this.configError(`failed to configure policy: ${p.configError}`) });
        continue;
      }
      for (const b of mine) this.binding(p, b, req, base, denials, warnings);
    }
    if (denials.length) throw denialError(req, denials[0]);
  }

  /**
   * A stored policy's status as the validatingadmissionpolicy-status controller writes it: `observedGeneration` and
   * `typeChecking` (expression warnings, type-check.ts). Written at once, like a CRD's Established condition.
   */
  writeStatus(policy: K8sObject): void {
    const warnings = typeCheck(policy, this.registry);
    const status = {
      ...(policy.status ?? {}),
      observedGeneration: policy.metadata.generation,
      typeChecking: warnings.length ? { expressionWarnings: warnings } : {},
    };
    if (JSON.stringify(status) === JSON.stringify(policy.status)) return;
    const next = structuredClone(policy);
    next.status = status;
    this.store.put(POLICIES, policy.metadata.name!, next);
  }

  private configError(message: string): Decision {
    return { action: 'Deny', message };
  }

  private binding(
    p: CompiledPolicy,
    b: K8sObject,
    req: AdmissionRequest,
    base: () => Record<string, unknown>,
    denials: Denial[],
    warnings: string[],
  ) {
    if (b.spec?.matchResources && !matchesResources(b.spec.matchResources, req, this.ctx)) return;
    const params = this.params(p, b, req);
    if (typeof params === 'string') {
      if (p.failurePolicy === 'Fail')
        denials.push({
          policy: p.name,
          binding: b.metadata.name,
          decision: this.configError(`failed to configure binding: ${params}`),
        });
      return;
    }
    const nsName = req.rt.builtin && req.rt.plural === 'namespaces' ? '' : (req.namespace ?? '');
    const ns = nsName ? this.store.get('core/namespaces', nsName) : undefined;
    const actions: string[] = b.spec?.validationActions ?? [];
    for (const param of params) {
      const namespaceObject = ns ? toCel(ns) : null;
      const vars = { ...base(), params: param ? toCel(param) : null, namespaceObject };
      const result = withAuthorizer(this.authorize, () => validate(p, vars));
      if (Object.keys(result.annotations).length)
        this.log?.info('validation policy audit annotations', {
          annotations: result.annotations,
          ...this.about(req),
        });
      for (const message of result.annotationErrors)
        denials.push({ policy: p.name, binding: b.metadata.name, decision: { action: 'Deny', message } });
      result.decisions.forEach((d, i) => {
        if (d.action !== 'Deny') return;
        if (actions.includes('Deny')) denials.push({ policy: p.name, binding: b.metadata.name, decision: d });
        if (actions.includes('Warn'))
          warnings.push(
            `Validation failed for ValidatingAdmissionPolicy '${p.name}' with binding '${b.metadata.name}': ${d.message}`,
          );
        if (actions.includes('Audit'))
          this.log?.info('validation policy audit', {
            'validation.policy.admission.k8s.io/validation_failure': JSON.stringify([
              {
                message: d.message,
                policy: p.name,
                binding: b.metadata.name,
                expressionIndex: i,
                validationActions: actions,
              },
            ]),
            ...this.about(req),
          });
      });
    }
  }

  /** What a log line says about the request. */
  private about(req: AdmissionRequest) {
    const resource = qualifiedResource(req.rt.group, req.rt.plural);
    return { resource, namespace: req.namespace, name: req.name, operation: req.operation };
  }

  /** The params of one binding (collectParams): `[null]` without paramKind or paramRef; an error's text. */
  private params(p: CompiledPolicy, b: K8sObject, req: AdmissionRequest): (K8sObject | null)[] | string {
    const kind = p.spec.paramKind;
    const ref = b.spec?.paramRef;
    if (!kind || !ref) return [null];
    const rt = this.registry.byKind(kind.apiVersion, kind.kind);
    if (!rt) return `paramKind kind \`${kind.apiVersion}, Kind=${kind.kind}\` not known`;
    let ns: string | undefined;
    if (rt.namespaced) {
      ns = ref.namespace || req.namespace;
      if (!ns) return 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources';
    } else if (ref.namespace) return 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`';
    if (!ref.name && !ref.selector) return 'one of name or selector must be provided';
    let found: K8sObject[];
    if (ref.name) {
      const o = this.store.get(rt.bucket, ns ? `${ns}/${ref.name}` : ref.name);
      found = o ? [o] : [];
    } else
      found = this.store.list(rt.bucket, ns).filter((o) => matchesLabelSelector(o.metadata.labels ?? {}, ref.selector));
    if (!found.length && ref.parameterNotFoundAction === 'Deny')
      return 'no params found for policy binding with `Deny` parameterNotFoundAction';
    return found;
  }
}

/** admission.NewForbidden with the decision's reason and code (dispatcher.go). */
function denialError(req: AdmissionRequest, d: Denial): ApiError {
  const what = d.binding
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.decision.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.decision.message}`;
  const reason = d.decision.reason || 'Invalid';
  const message = `${qualifiedResource(req.rt.group, req.rt.plural)} "${req.name}" is forbidden: ${what}`;
  return new ApiError(CODES[reason] ?? 403, reason, message, {
    name: req.name,
    group: req.rt.group || undefined,
    kind: req.rt.plural,
    causes: [{ message: what }],
  });
}
