// RBAC escalation prevention, as kube-apiserver's policy-based storages of Roles, ClusterRoles, RoleBindings and
// ClusterRoleBindings do (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased,
// pkg/registry/rbac/escalation_check.go, pkg/registry/rbac/validation/{rule.go,policy_comparator.go,
// policy_compact.go}). Every create and update of these kinds (POST, PUT, every PATCH, server-side apply, dry runs
// too) passes here before anything is stored:
// - a Role/ClusterRole may only grant what its writer holds (in the request's namespace), unless the writer may
//   `escalate` it; a ClusterRole with an aggregationRule needs full authority (`*` on everything);
// - a RoleBinding/ClusterRoleBinding may only bind a role whose every rule its writer holds (in the binding's
//   namespace), unless the writer may `bind` that role (resourceNames apply: `bind` on clusterroles/view only);
// - members of system:masters, and the server's own writes (no user), bypass it.
// A refusal is 403 Forbidden with Kubernetes' message ("... is attempting to grant RBAC permissions not currently
// held: ..."). Rules are compared with rbac.ts's ruleAllows, one atomic (verb, group, resource, name) at a time.
import { isPrivileged, type UserInfo } from './authn.ts';
import { errors } from './errors.ts';
import { type Attributes, type Authorizer, type PolicyRule, ruleAllows } from './rbac.ts';
import type { K8sObject } from './store.ts';

const GROUP = 'rbac.authorization.k8s.io';
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** A write of an RBAC object, as the storage sees it. */
export interface RbacWrite {
  /** roles | clusterroles | rolebindings | clusterrolebindings */
  resource: string;
  /** The object about to be stored (defaulted and validated). */
  obj: K8sObject;
  /** The stored object, on updates. */
  old?: K8sObject;
  /** The requester; undefined for the server's own writes. */
  user?: UserInfo;
  /** The name in the request's URL (none for a POST), which `escalate` is checked against. */
  requestName?: string;
}

/** BreakdownRule: one rule per (group, resource, verb[, name]) and per (URL, verb). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const g of rule.apiGroups ?? [])
    for (const r of rule.resources ?? [])
      for (const v of rule.verbs ?? []) {
        if (rule.resourceNames?.length)
          for (const n of rule.resourceNames)
            out.push({ apiGroups: [g], resources: [r], verbs: [v], resourceNames: [n] });
        else out.push({ apiGroups: [g], resources: [r], verbs: [v] });
      }
  for (const u of rule.nonResourceURLs ?? [])
    for (const v of rule.verbs ?? []) out.push({ nonResourceURLs: [u], verbs: [v] });
  return out;
}

/** An atomic rule as the request it would allow: `*` stays a literal that only a `*` in the owner's rule matches. */
function asAttributes(sub: PolicyRule): Attributes {
  const verb = sub.verbs![0];
  if (sub.nonResourceURLs) return { verb, path: sub.nonResourceURLs[0] };
  const [resource, ...rest] = sub.resources![0].split('/');
  return {
    verb,
    group: sub.apiGroups![0],
    resource,
    subresource: rest.length ? rest.join('/') : undefined,
    name: sub.resourceNames?.[0],
  };
}

/** Covers: whether the owner's rules cover every atomic piece of `rules`, and the pieces they do not. */
export function covers(ownerRules: PolicyRule[], rules: PolicyRule[]): PolicyRule[] {
  return rules
    .flatMap(breakdownRule)
    .filter((sub) => !ownerRules.some((owner) => ruleAllows(owner, asAttributes(sub))));
}

/** CompactRules: atomic rules of one group, one resource and at most one name are merged across verbs. */
function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const simple = new Map<string, PolicyRule>();
  const out: PolicyRule[] = [];
  for (const r of rules) {
    const isSimple =
      !r.nonResourceURLs?.length &&
      (r.resourceNames?.length ?? 0) <= 1 &&
      r.apiGroups?.length === 1 &&
      r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? null]);
    const seen = simple.get(key);
    if (seen) seen.verbs = [...(seen.verbs ?? []), ...(r.verbs ?? [])];
    else simple.set(key, { ...r, verbs: [...(r.verbs ?? [])] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: ["a" "b"]. */
const goQuoted = (list: string[]) => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;

/** CompactString (pkg/apis/rbac/v1/evaluation_helpers.go): `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuoted(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuoted(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoted(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuoted(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goQuoted(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** IsOnlyMutatingGCFields: the update changes nothing but ownerReferences, finalizers and managedFields. */
function onlyGcFields(obj: K8sObject, old: K8sObject): boolean {
  const norm = (o: K8sObject) => {
    const { ownerReferences: _o, finalizers: _f, selfLink: _s, managedFields: _m, ...meta } = o.metadata;
    return JSON.stringify({ ...o, metadata: meta });
  };
  return norm(obj) === norm(old);
}

export class EscalationCheck {
  private readonly authz: Authorizer;
  constructor(authz: Authorizer) {
    this.authz = authz;
  }

  /** Throws 403 (or 404 for a binding to a missing role) when the write would grant more than its writer holds. */
  check(w: RbacWrite): void {
    const { user, obj } = w;
    if (!user || isPrivileged(user)) return; // EscalationAllowed
    if (w.old && onlyGcFields(obj, w.old)) return;
    const namespace = obj.metadata.namespace || undefined;
    if (w.resource === 'roles' || w.resource === 'clusterroles') {
      // RoleEscalationAuthorized: `escalate` on the role named in the request.
      const escalate = { verb: 'escalate', group: GROUP, resource: w.resource, name: w.requestName, namespace };
      if (this.authz.allowed(user, escalate)) return;
      this.confirmNoEscalation(w, user, namespace, obj.rules ?? []);
      const aggregates = (o?: K8sObject) => !!o?.aggregationRule?.clusterRoleSelectors?.length;
      if (w.resource === 'clusterroles' && (aggregates(obj) || aggregates(w.old)))
        this.confirmNoEscalation(
          w,
          user,
          namespace,
          FULL_AUTHORITY,
          'must have cluster-admin privileges to use the aggregationRule',
        );
      return;
    }
    if (w.resource !== 'rolebindings' && w.resource !== 'clusterrolebindings') return;
    const ref = obj.roleRef ?? {};
    // BindingAuthorized: `bind` on the referenced role, in the binding's namespace.
    const bind: Attributes = {
      verb: 'bind',
      group: ref.apiGroup ?? '',
      resource: ref.kind === 'Role' ? 'roles' : 'clusterroles',
      name: ref.name,
      namespace,
    };
    if ((ref.kind === 'Role' || ref.kind === 'ClusterRole') && this.authz.allowed(user, bind)) return;
    this.confirmNoEscalation(w, user, namespace, this.authz.roleRefRules(ref, namespace));
  }

  /** ConfirmNoEscalation: the user's own rules in `namespace` must cover `rules`. */
  private confirmNoEscalation(
    w: RbacWrite,
    user: UserInfo,
    namespace: string | undefined,
    rules: PolicyRule[],
    why?: string,
  ): void {
    const owner = this.authz.rulesFor(user, namespace);
    const missing = covers(owner.rules, rules);
    if (!missing.length) return;
    let msg = why;
    if (!msg) {
      const lines = [...new Set(compactRules(missing).map(compactString))].sort();
      msg = `user ${JSON.stringify(user.username)} (groups=${goQuoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
      if (owner.errors.length)
        msg += `; resolution errors: [${owner.errors.length === 1 ? owner.errors[0] : `[${owner.errors.join(', ')}]`}]`;
    }
    const name = w.obj.metadata.name ?? '';
    const qualified = `${w.resource}.${GROUP}`;
    throw errors.forbidden(`${qualified}${name ? ` ${JSON.stringify(name)}` : ''} is forbidden: ${msg}`, {
      name: name || undefined,
      group: GROUP,
      kind: w.resource,
    });
  }
}
