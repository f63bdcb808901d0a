// RBAC escalation prevention (escalation.ts) with real kubectl 1.32 and raw requests, checked against what
// kube-apiserver 1.32 does (pkg/registry/rbac/*/policybased, escalation_check.go, validation/rule.go): a
// service account that may write RBAC objects cannot grant more than it holds, whatever the write path, unless it may
// `bind` the role (by name) or `escalate`; refusals are 403 with Kubernetes' message and store nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, closeApiAgents } from './testing/requests.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
let token: string;
let kc: string;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const USER =
  'user "system:serviceaccount:team:deployer" (groups=["system:serviceaccounts" "system:serviceaccounts:team" "system:authenticated"])';
const NOT_HELD = 'is attempting to grant RBAC permissions not currently held';

const role = (name: string, rules: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, namespace: 'team' },
  rules,
  ...extra,
});
const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name },
  rules,
  ...extra,
});
const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, ref: string, sa = 'target') => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: kind === 'RoleBinding' ? { name, namespace: 'team' } : { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: ref.split('/')[0], name: ref.split('/')[1] },
  subjects: [{ kind: 'ServiceAccount', name: sa, namespace: 'team' }],
});
/** Creates as the lab admin (system:masters). */
const admin = async (path: string, body: unknown) => {
  const r = await api(lab, 'POST', path, { body });
  if (r.status !== 201) throw new Error(`admin POST ${path}: ${r.status} ${r.text}`);
  return r.json;
};
/** A request as the deployer service account. */
const as = (method: string, path: string, opts: { body?: unknown; raw?: string; ct?: string } = {}) =>
  api(lab, method, path, { ...opts, token });
const kubectlAs = (args: string[], input?: string) => lab.kubectl(args, { kubeconfig: kc, input });
const stored = async (path: string) => (await api(lab, 'GET', path)).json;

beforeAll(async () => {
  lab = await startTestLab({ labName: 'escalation' });
  await admin('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
  for (const sa of ['deployer', 'target'])
    await admin('/api/v1/namespaces/team/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: sa },
    });
  // deployer may write Roles and RoleBindings in team, ClusterRoles and ClusterRoleBindings, and read ConfigMaps in
  // team: nothing else.
  const write = ['get', 'list', 'create', 'update', 'patch'];
  await admin(
    `${RBAC}/namespaces/team/roles`,
    role('deployer', [
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: write },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]),
  );
  await admin(`${RBAC}/namespaces/team/rolebindings`, binding('RoleBinding', 'deployer', 'Role/deployer', 'deployer'));
  await admin(
    `${RBAC}/clusterroles`,
    clusterRole('rbac-writer', [
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles', 'clusterrolebindings'], verbs: write },
    ]),
  );
  await admin(
    `${RBAC}/clusterrolebindings`,
    binding('ClusterRoleBinding', 'deployer-rbac-writer', 'ClusterRole/rbac-writer', 'deployer'),
  );
  await admin(
    `${RBAC}/namespaces/team/roles`,
    role('secret-admin', [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'delete'] }]),
  );
  token = lab.server.issueServiceAccountToken('team', 'deployer');
  kc = lab.kubeconfigFor(token, 'deployer');
});
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

describe('RoleBindings and ClusterRoleBindings', () => {
  it('binding a role with permissions the requester lacks is 403 with Kubernetes message, on create (POST, kubectl create, apply, apply --server-side, dry run)', async () => {
    const b = binding('RoleBinding', 'bind-secret-admin', 'Role/secret-admin');
    const r = await as('POST', `${RBAC}/namespaces/team/rolebindings`, { body: b });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      details: { name: 'bind-secret-admin', group: 'rbac.authorization.k8s.io', kind: 'rolebindings' },
    });
    // The missing rules, broken down, compacted by resource and sorted, as ConfirmNoEscalation prints them.
    expect(r.json.message).toBe(
      `rolebindings.rbac.authorization.k8s.io "bind-secret-admin" is forbidden: ${USER} ${NOT_HELD}:\n` +
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}',
    );
    const dry = await as('POST', `${RBAC}/namespaces/team/rolebindings?dryRun=All`, { body: b });
    expect(dry.status).toBe(403);

    const generator = await kubectlAs([
      'create',
      'rolebinding',
      'bind-secret-admin',
      '--role=secret-admin',
      '--serviceaccount=team:target',
      '-n',
      'team',
    ]);
    expect(generator.code).not.toBe(0);
    expect(generator.stderr).toContain(`is forbidden: ${USER} ${NOT_HELD}`);
    for (const args of [
      ['apply', '-f', '-'],
      ['apply', '--server-side', '-f', '-'],
      ['create', '-f', '-'],
    ]) {
      const k = await kubectlAs(args, JSON.stringify(b));
      expect(k.code, args.join(' ')).not.toBe(0);
      expect(k.stderr, args.join(' ')).toContain(NOT_HELD);
    }
    expect((await api(lab, 'GET', `${RBAC}/namespaces/team/rolebindings/bind-secret-admin`)).status).toBe(404);
  });

  it('every update path (PUT, merge, JSON and strategic merge patch, server-side apply) is checked; nothing changes; GC fields alone pass', async () => {
    await admin(`${RBAC}/namespaces/team/rolebindings`, binding('RoleBinding', 'secret-admins', 'Role/secret-admin'));
    const path = `${RBAC}/namespaces/team/rolebindings/secret-admins`;
    const before = await stored(path);
    const more = [...before.subjects, { kind: 'ServiceAccount', name: 'deployer', namespace: 'team' }];
    const attempts = [
      as('PUT', path, { body: { ...before, subjects: more } }),
      as('PATCH', path, { raw: JSON.stringify({ subjects: more }), ct: 'application/merge-patch+json' }),
      as('PATCH', path, {
        raw: JSON.stringify([{ op: 'add', path: '/subjects/-', value: more[1] }]),
        ct: 'application/json-patch+json',
      }),
      as('PATCH', path, { raw: JSON.stringify({ subjects: more }), ct: 'application/strategic-merge-patch+json' }),
      as('PATCH', `${path}?fieldManager=deployer&force=true`, {
        raw: JSON.stringify({ ...binding('RoleBinding', 'secret-admins', 'Role/secret-admin'), subjects: more }),
        ct: 'application/apply-patch+yaml',
      }),
    ];
    for (const r of await Promise.all(attempts)) {
      expect(r.status, r.text).toBe(403);
      expect(r.json.message).toContain(`rolebindings.rbac.authorization.k8s.io "secret-admins" is forbidden: ${USER}`);
    }
    const k = await kubectlAs(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      JSON.stringify({ ...binding('RoleBinding', 'secret-admins', 'Role/secret-admin'), subjects: more }),
    );
    expect(k.stderr).toContain(NOT_HELD);
    expect((await stored(path)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    // Only ownerReferences/finalizers change: allowed, as for the garbage collector (IsOnlyMutatingGCFields).
    const gc = await as('PATCH', path, {
      raw: JSON.stringify({ metadata: { finalizers: ['example.com/keep'] } }),
      ct: 'application/merge-patch+json',
    });
    expect(gc.status, gc.text).toBe(200);
  });

  it('binding a role the requester holds is allowed; a missing role is 404', async () => {
    await admin(
      `${RBAC}/namespaces/team/roles`,
      role('cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]),
    );
    const ok = await kubectlAs([
      'create',
      'rolebinding',
      'read-cms',
      '--role=cm-reader',
      '--serviceaccount=team:target',
      '-n',
      'team',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    const missing = await as('POST', `${RBAC}/namespaces/team/rolebindings`, {
      body: binding('RoleBinding', 'to-nothing', 'Role/nope'),
    });
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('roles.rbac.authorization.k8s.io "nope" not found');
  });

  it('`bind` on a role allows binding that role only (resourceNames), and only in the namespace it is held in', async () => {
    await admin(
      `${RBAC}/namespaces/team/roles`,
      role('binder', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles'],
          verbs: ['bind'],
          resourceNames: ['view'],
        },
      ]),
    );
    await admin(`${RBAC}/namespaces/team/rolebindings`, binding('RoleBinding', 'binder', 'Role/binder', 'deployer'));
    const view = await as('POST', `${RBAC}/namespaces/team/rolebindings`, {
      body: binding('RoleBinding', 'target-view', 'ClusterRole/view'),
    });
    expect(view.status, view.text).toBe(201);
    const edit = await as('POST', `${RBAC}/namespaces/team/rolebindings`, {
      body: binding('RoleBinding', 'target-edit', 'ClusterRole/edit'),
    });
    expect(edit.status).toBe(403);
    expect(edit.json.message).toContain(`rolebindings.rbac.authorization.k8s.io "target-edit" is forbidden: ${USER}`);
    // The aggregated rules of edit count (the aggregation controller's result): secrets are among them.
    expect(edit.json.message).toContain('{APIGroups:[""], Resources:["secrets"], Verbs:[');
    const cluster = await as('POST', `${RBAC}/clusterrolebindings`, {
      body: binding('ClusterRoleBinding', 'target-view', 'ClusterRole/view'),
    });
    expect(cluster.status).toBe(403);
    expect(cluster.json.message).toContain(
      `clusterrolebindings.rbac.authorization.k8s.io "target-view" is forbidden: ${USER} ${NOT_HELD}`,
    );
    expect((await api(lab, 'GET', `${RBAC}/clusterrolebindings/target-view`)).status).toBe(404);
  });
});

describe('Roles and ClusterRoles', () => {
  it('rules the requester does not hold need escalate; held ones (cluster-wide for a ClusterRole) do not', async () => {
    const secrets = await as('POST', `${RBAC}/namespaces/team/roles`, {
      body: role('wants-secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['s1'] }]),
    });
    expect(secrets.status).toBe(403);
    expect(secrets.json.message).toBe(
      `roles.rbac.authorization.k8s.io "wants-secrets" is forbidden: ${USER} ${NOT_HELD}:\n` +
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["s1"], Verbs:["get"]}',
    );
    const kc1 = await kubectlAs(['create', 'role', 'wants-secrets', '--verb=get', '--resource=secrets', '-n', 'team']);
    expect(kc1.stderr).toContain(NOT_HELD);

    const held = await as('POST', `${RBAC}/namespaces/team/roles`, {
      body: role('cm-only', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]),
    });
    expect(held.status, held.text).toBe(201);
    const widen = await as('PATCH', `${RBAC}/namespaces/team/roles/cm-only`, {
      raw: JSON.stringify([{ op: 'add', path: '/rules/0/verbs/-', value: 'delete' }]),
      ct: 'application/json-patch+json',
    });
    expect(widen.status).toBe(403);
    expect(widen.json.message).toContain('{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}');
    expect((await stored(`${RBAC}/namespaces/team/roles/cm-only`)).rules[0].verbs).toEqual(['get', 'list']);

    // ConfigMaps are held in team only: a ClusterRole granting them is an escalation.
    const crCm = await as('POST', `${RBAC}/clusterroles`, {
      body: clusterRole('cr-cm', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]),
    });
    expect(crCm.status).toBe(403);
    expect(crCm.json.message).toContain(`clusterroles.rbac.authorization.k8s.io "cr-cm" is forbidden: ${USER}`);
    const crHeld = await as('POST', `${RBAC}/clusterroles`, {
      body: clusterRole('cr-rbac', [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['get'] },
      ]),
    });
    expect(crHeld.status, crHeld.text).toBe(201);
    const agg = await as('POST', `${RBAC}/clusterroles`, {
      body: clusterRole('cr-agg', [], {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] },
      }),
    });
    expect(agg.status).toBe(403);
    expect(agg.json.message).toBe(
      'clusterroles.rbac.authorization.k8s.io "cr-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );
    for (const name of ['wants-secrets'])
      expect((await api(lab, 'GET', `${RBAC}/namespaces/team/roles/${name}`)).status).toBe(404);
    for (const name of ['cr-cm', 'cr-agg'])
      expect((await api(lab, 'GET', `${RBAC}/clusterroles/${name}`)).status).toBe(404);
  });

  it('escalate on roles lifts the check; system:masters is never checked', async () => {
    await admin(
      `${RBAC}/namespaces/team/roles`,
      role('escalator', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }]),
    );
    await admin(
      `${RBAC}/namespaces/team/rolebindings`,
      binding('RoleBinding', 'escalator', 'Role/escalator', 'deployer'),
    );
    const k = await kubectlAs(['create', 'role', 'wants-secrets', '--verb=get', '--resource=secrets', '-n', 'team']);
    expect(k.code, k.stderr).toBe(0);
    const everything = await api(lab, 'POST', `${RBAC}/clusterroles`, {
      body: clusterRole('all', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' } }] },
      }),
    });
    expect(everything.status).toBe(201);
  });
});
