// RBAC authorization for non-privileged users (service accounts and any non-system:masters identity): Roles,
// ClusterRoles (with aggregation) and their bindings, evaluated on every request as Kubernetes' RBAC authorizer does.
// The default cluster roles and bindings that every Kubernetes cluster has are created at start (bootstrapPolicy).
import type { UserInfo } from './authn.ts';
import { errors } from './errors.ts';
import { fromLabelSelectorObject, matchLabels } from './selectors.ts';
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

function subjectMatches(s: any, user: UserInfo, bindingNs?: string): boolean {
  switch (s?.kind) {
    case 'User':
      return s.name === user.username;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount':
      return user.username === `system:serviceaccount:${s.namespace || bindingNs}:${s.name}`;
    default:
      return false;
  }
}

function has(list: string[] | undefined, v: string): boolean {
  return !!list && (list.includes('*') || list.includes(v));
}

function ruleAllows(rule: any, a: Attributes): boolean {
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

  private clusterRoleRules(name: string): any[] {
    const cr = this.store.get(CR, name);
    if (!cr) return [];
    const rules = [...(cr.rules ?? [])];
    const agg = cr.aggregationRule?.clusterRoleSelectors as any[] | undefined;
    if (agg?.length) {
      for (const other of this.store.list(CR)) {
        if (other.metadata.name === name) continue;
        if (agg.some((sel) => matchLabels(fromLabelSelectorObject(sel) ?? [], other.metadata.labels)))
          rules.push(...(other.rules ?? []));
      }
    }
    return rules;
  }

  allowed(user: UserInfo, a: Attributes): boolean {
    for (const b of this.store.list(CRB)) {
      if (!(b.subjects ?? []).some((s: any) => subjectMatches(s, user))) continue;
      if (b.roleRef?.kind !== 'ClusterRole') continue;
      if (this.clusterRoleRules(b.roleRef.name).some((r) => ruleAllows(r, a))) return true;
    }
    if (a.namespace && a.path === undefined) {
      for (const b of this.store.list(RBB, a.namespace)) {
        if (!(b.subjects ?? []).some((s: any) => subjectMatches(s, user, a.namespace))) continue;
        const rules =
          b.roleRef?.kind === 'ClusterRole'
            ? this.clusterRoleRules(b.roleRef.name)
            : (this.store.get(RB, `${a.namespace}/${b.roleRef?.name}`)?.rules ?? []);
        if (rules.some((r: any) => ruleAllows(r, a))) return true;
      }
    }
    return false;
  }

  /** Throws 403 Forbidden with Kubernetes' message when the user may not do `a`. */
  authorize(user: UserInfo, a: Attributes): void {
    if (this.allowed(user, a)) return;
    throw forbidden(user, a);
  }

  /** Rules that apply to the user in a namespace (SelfSubjectRulesReview). */
  rulesFor(user: UserInfo, namespace: string): { resourceRules: any[]; nonResourceRules: any[] } {
    const rules: any[] = [];
    for (const b of this.store.list(CRB)) {
      if ((b.subjects ?? []).some((s: any) => subjectMatches(s, user)) && b.roleRef?.kind === 'ClusterRole')
        rules.push(...this.clusterRoleRules(b.roleRef.name));
    }
    for (const b of this.store.list(RBB, namespace)) {
      if (!(b.subjects ?? []).some((s: any) => subjectMatches(s, user, namespace))) continue;
      rules.push(
        ...(b.roleRef?.kind === 'ClusterRole'
          ? this.clusterRoleRules(b.roleRef.name)
          : (this.store.get(RB, `${namespace}/${b.roleRef?.name}`)?.rules ?? [])),
      );
    }
    return {
      resourceRules: rules
        .filter((r) => !r.nonResourceURLs?.length)
        .map((r) => ({
          verbs: r.verbs,
          apiGroups: r.apiGroups,
          resources: r.resources,
          resourceNames: r.resourceNames,
        })),
      nonResourceRules: rules
        .filter((r) => r.nonResourceURLs?.length)
        .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
    };
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
