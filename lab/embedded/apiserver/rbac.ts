// RBAC authorization for non-privileged users (service accounts and any non-system:masters identity): Roles,
// ClusterRoles (with aggregation) and their bindings, evaluated on every request as Kubernetes' RBAC authorizer does
// (plugin/pkg/auth/authorizer/rbac, pkg/registry/rbac/validation/rule.go). escalation.ts builds on the same rules.
// The default cluster roles and bindings that every Kubernetes cluster has are created at start (bootstrapPolicy).
import { matchesLabelSelector } from '../../../system/shared/selectors.ts';
import type { UserInfo } from './authn.ts';
import { errors } from './errors.ts';
import type { K8sObject, Store } from './store.ts';

export interface Attributes {
  verb: string;
  /** Resource requests. */
  resource?: string;
  subresource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  /** Non-resource requests (e.g. /api, /version). */
  path?: string;
}

const RB = 'rbac.authorization.k8s.io/roles';
const RBB = 'rbac.authorization.k8s.io/rolebindings';
const CR = 'rbac.authorization.k8s.io/clusterroles';
const CRB = 'rbac.authorization.k8s.io/clusterrolebindings';

/** An RBAC PolicyRule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

function subjectMatches(s: any, user: UserInfo, bindingNs?: string): boolean {
  switch (s?.kind) {
    case 'User':
      return s.name === user.username;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNs;
      return !!ns && user.username === `system:serviceaccount:${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

function has(list: string[] | undefined, v: string): boolean {
  return !!list && (list.includes('*') || list.includes(v));
}

/**
 * Whether one rule allows a request (Kubernetes' RuleAllows in plugin/pkg/auth/authorizer/rbac). The one rule matcher
 * of this server: authorization, and the escalation check (escalation.ts), which asks it about each atomic
 * (verb, group, resource, name) piece of the rules being granted.
 */
export function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (a.path !== undefined) {
    return (rule.nonResourceURLs ?? []).some(
      (u: string) => u === '*' || u === a.path || (u.endsWith('*') && a.path!.startsWith(u.slice(0, -1))),
    );
  }
  if (!has(rule.apiGroups, a.group ?? '')) return false;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource!;
  const resources: string[] = rule.resources ?? [];
  const resOk =
    resources.includes('*') ||
    resources.includes(res) ||
    (a.subresource !== undefined && resources.includes(`*/${a.subresource}`));
  if (!resOk) return false;
  if (rule.resourceNames?.length) return a.name !== undefined && rule.resourceNames.includes(a.name);
  return true;
}

export class Authorizer {
  private readonly store: Store;
  constructor(store: Store) {
    this.store = store;
  }

  /** A ClusterRole's rules, with those its aggregationRule selects (what Kubernetes' aggregation controller stores). */
  private clusterRoleRules(cr: K8sObject): PolicyRule[] {
    const rules = [...(cr.rules ?? [])];
    const agg = cr.aggregationRule?.clusterRoleSelectors as any[] | undefined;
    if (agg?.length) {
      for (const other of this.store.list(CR)) {
        if (other.metadata.name === cr.metadata.name) continue;
        if (agg.some((sel) => matchesLabelSelector(other.metadata.labels, sel ?? {})))
          rules.push(...(other.rules ?? []));
      }
    }
    return rules;
  }

  /**
   * The rules a binding's roleRef grants (GetRoleReferenceRules): the ClusterRole's, or the Role's in the binding's
   * namespace. A role that does not exist is a NotFound error, as the role storage answers.
   */
  roleRefRules(ref: RoleRef | undefined, bindingNamespace: string | undefined): PolicyRule[] {
    if (ref?.kind === 'ClusterRole') {
      const cr = this.store.get(CR, ref.name ?? '');
      if (!cr) throw errors.notFound('rbac.authorization.k8s.io', 'clusterroles', ref.name ?? '');
      return this.clusterRoleRules(cr);
    }
    if (ref?.kind === 'Role' && bindingNamespace) {
      const role = this.store.get(RB, `${bindingNamespace}/${ref.name}`);
      if (!role) throw errors.notFound('rbac.authorization.k8s.io', 'roles', ref.name ?? '');
      return role.rules ?? [];
    }
    throw errors.badRequest(`unsupported role reference kind: ${JSON.stringify(ref?.kind ?? '')}`);
  }

  /**
   * VisitRulesFor: the rules of every ClusterRoleBinding, then (in a namespace) every RoleBinding, whose subjects
   * match the user; `visit` returns false to stop. A binding whose role is missing is reported by its error.
   */
  private visitRulesFor(
    user: UserInfo,
    namespace: string | undefined,
    visit: (rules: PolicyRule[]) => boolean,
  ): string[] {
    const errs: string[] = [];
    const bindings: [K8sObject, string | undefined][] = this.store
      .list(CRB)
      .map((b): [K8sObject, undefined] => [b, undefined]);
    if (namespace) for (const b of this.store.list(RBB, namespace)) bindings.push([b, namespace]);
    for (const [b, ns] of bindings) {
      if (!(b.subjects ?? []).some((s: any) => subjectMatches(s, user, ns))) continue;
      let rules: PolicyRule[];
      try {
        rules = this.roleRefRules(b.roleRef, ns);
      } catch (e) {
        errs.push((e as Error).message);
        continue;
      }
      if (!visit(rules)) break;
    }
    return errs;
  }

  allowed(user: UserInfo, a: Attributes): boolean {
    let ok = false;
    this.visitRulesFor(user, a.path === undefined ? a.namespace : undefined, (rules) => {
      ok = rules.some((r) => ruleAllows(r, a));
      return !ok;
    });
    return ok;
  }

  /** Throws 403 Forbidden with Kubernetes' message when the user may not do `a`. */
  authorize(user: UserInfo, a: Attributes): void {
    if (this.allowed(user, a)) return;
    throw forbidden(user, a);
  }

  /**
   * Every rule that applies to the user in a namespace (RulesFor: cluster-wide bindings, plus the namespace's), and the
   * errors met resolving them (bindings to missing roles), for SelfSubjectRulesReview and the escalation check.
   */
  rulesFor(user: UserInfo, namespace: string | undefined): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errs = this.visitRulesFor(user, namespace, (r) => {
      rules.push(...r);
      return true;
    });
    return { rules, errors: errs };
  }
}

export function forbidden(user: UserInfo, a: Attributes) {
  if (a.path !== undefined)
    return errors.forbidden(`forbidden: User "${user.username}" cannot ${a.verb} path "${a.path}"`, {});
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource!;
  const qualified = a.group ? `${a.resource}.${a.group}` : a.resource!;
  const subject = a.name ? `${qualified} "${a.name}"` : qualified;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return errors.forbidden(
    `${subject} is forbidden: User "${user.username}" cannot ${a.verb} resource "${res}" in API group "${a.group ?? ''}" ${scope}`,
    { name: a.name, group: a.group || undefined, kind: a.resource },
  );
}

const ALL_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const READ = ['get', 'list', 'watch'];

/** The default ClusterRoles and ClusterRoleBindings of a Kubernetes cluster (the subset this lab's users meet). */
export function bootstrapPolicy(): K8sObject[] {
  const meta = (name: string, extraLabels: Record<string, string> = {}) => ({
    name,
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...extraLabels },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  });
  const role = (name: string, rules: any[], labels?: Record<string, string>, aggregate?: string[]): K8sObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    rules,
    ...(aggregate
      ? {
          aggregationRule: {
            clusterRoleSelectors: aggregate.map((l) => ({ matchLabels: { [l]: 'true' } })),
          },
        }
      : {}),
  });
  const binding = (name: string, roleName: string, groups: string[]): K8sObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  });
  const core = [
    'pods',
    'services',
    'endpoints',
    'configmaps',
    'secrets',
    'serviceaccounts',
    'events',
    'pods/log',
    'pods/status',
    'services/status',
  ];
  return [
    role('cluster-admin', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]),
    role('system:discovery', [
      {
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
        verbs: ['get'],
      },
    ]),
    role('system:public-info-viewer', [
      { nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] },
    ]),
    role('system:basic-user', [
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ]),
    role('view', [], {}, ['rbac.authorization.k8s.io/aggregate-to-view']),
    role('edit', [], {}, ['rbac.authorization.k8s.io/aggregate-to-edit']),
    role('admin', [], {}, ['rbac.authorization.k8s.io/aggregate-to-admin']),
    role(
      'system:aggregate-to-view',
      [
        { apiGroups: [''], resources: core.filter((r) => r !== 'secrets'), verbs: READ },
        {
          apiGroups: ['apps'],
          resources: ['deployments', 'replicasets', 'deployments/scale', 'replicasets/scale'],
          verbs: READ,
        },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ },
        { apiGroups: [''], resources: ['namespaces'], verbs: READ },
      ],
      { 'rbac.authorization.k8s.io/aggregate-to-view': 'true', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' },
    ),
    role(
      'system:aggregate-to-edit',
      [
        { apiGroups: [''], resources: core, verbs: ALL_VERBS },
        {
          apiGroups: ['apps'],
          resources: ['deployments', 'replicasets', 'deployments/scale', 'replicasets/scale'],
          verbs: ALL_VERBS,
        },
        { apiGroups: [''], resources: ['pods/portforward', 'pods/exec', 'pods/attach'], verbs: ['get', 'create'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ALL_VERBS },
      ],
      { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true', 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' },
    ),
    role(
      'system:aggregate-to-admin',
      [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ALL_VERBS }],
      { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' },
    ),
    binding('cluster-admin', 'cluster-admin', ['system:masters']),
    binding('system:discovery', 'system:discovery', ['system:authenticated']),
    binding('system:basic-user', 'system:basic-user', ['system:authenticated']),
    binding('system:public-info-viewer', 'system:public-info-viewer', [
      'system:authenticated',
      'system:unauthenticated',
    ]),
  ];
}
