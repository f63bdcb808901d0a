// The create-only review resources, answered and never stored: SelfSubjectAccessReview and SubjectAccessReview
// (`kubectl auth can-i`), SelfSubjectRulesReview (`kubectl auth can-i --list`) and SelfSubjectReview
// (`kubectl auth whoami`), shaped as kube-apiserver answers them (pkg/registry/authorization/*,
// pkg/registry/authentication/selfsubjectreview). Creating one is authorized like any create (system:basic-user grants
// the self reviews to every authenticated user); the HTTP layer does that before calling here.
import { isPrivileged, type UserInfo } from './authn.ts';
import { errors } from './errors.ts';
import type { Authorizer, PolicyRule } from './rbac.ts';

export type Review = (user: UserInfo, body: unknown) => unknown;

/** The review answering `group/version/resource`, or undefined when it is not one. */
export function reviewFor(authz: Authorizer, group: string, version: string, resource?: string): Review | undefined {
  if (version !== 'v1') return undefined;
  if (group === 'authorization.k8s.io') {
    if (resource === 'selfsubjectaccessreviews') return (user, body) => accessReview(authz, user, body, true);
    if (resource === 'subjectaccessreviews') return (user, body) => accessReview(authz, user, body, false);
    if (resource === 'selfsubjectrulesreviews') return (user, body) => rulesReview(authz, user, body);
  }
  if (group === 'authentication.k8s.io' && resource === 'selfsubjectreviews') return (user) => selfSubjectReview(user);
  return undefined;
}

function accessReview(authz: Authorizer, user: UserInfo, body: unknown, self: boolean) {
  const spec = (body as any)?.spec ?? {};
  const subject: UserInfo = self ? user : { username: spec.user ?? '', groups: spec.groups ?? [], uid: spec.uid };
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  const allowed =
    isPrivileged(subject) ||
    (ra
      ? authz.allowed(subject, {
          verb: ra.verb,
          group: ra.group ?? '',
          resource: ra.resource,
          subresource: ra.subresource || undefined,
          namespace: ra.namespace || undefined,
          name: ra.name || undefined,
        })
      : nra
        ? authz.allowed(subject, { verb: nra.verb, path: nra.path })
        : false);
  return {
    kind: self ? 'SelfSubjectAccessReview' : 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed, ...(allowed ? { reason: isPrivileged(subject) ? 'system:masters' : 'RBAC: allowed' } : {}) },
  };
}

/**
 * The rules of the user in `spec.namespace` from RBAC, for every user (system:masters too: the privileged-group
 * authorizer resolves no rules, so theirs are those of their bindings, cluster-admin's among them). Bindings to
 * missing roles are reported in `evaluationError`, as the RBAC rule resolver does; `incomplete` stays false.
 */
function rulesReview(authz: Authorizer, user: UserInfo, body: unknown) {
  const namespace = (body as any)?.spec?.namespace;
  if (!namespace) throw errors.badRequest('no namespace on request');
  const { rules, errors: errs } = authz.rulesFor(user, namespace);
  const resourceRules = rules
    .filter((r) => r.resources?.length)
    .map((r: PolicyRule) => ({
      verbs: r.verbs ?? [],
      ...(r.apiGroups?.length ? { apiGroups: r.apiGroups } : {}),
      resources: r.resources,
      ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
    }));
  const nonResourceRules = rules
    .filter((r) => r.nonResourceURLs?.length)
    .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs }));
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: {},
    status: {
      resourceRules,
      nonResourceRules,
      incomplete: false,
      ...(errs.length ? { evaluationError: errs.length === 1 ? errs[0] : `[${errs.join(', ')}]` } : {}),
    },
  };
}

function selfSubjectReview(user: UserInfo) {
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
    status: {
      userInfo: {
        username: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: user.groups,
        ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
      },
    },
  };
}
