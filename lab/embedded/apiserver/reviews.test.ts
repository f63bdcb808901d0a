// kubectl 1.32's `auth can-i --list` (SelfSubjectRulesReview, sent as protobuf) and `auth whoami` (SelfSubjectReview)
// against the server, with the output a kind cluster of 1.32 gives for the same bindings (its default roles less the
// service-account-issuer-discovery one, whose endpoints this server does not serve).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, closeApiAgents } from './testing/requests.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
let kc: string;
let token: string;

/** The rows of kubectl's rules table, columns split on runs of spaces (an empty first column stays ''). */
const rows = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => l.split(/\s{2,}/));

const DISCOVERY_ROWS = [
  ['', '[/api/*]', '[]', '[get]'],
  ['', '[/api]', '[]', '[get]'],
  ['', '[/apis/*]', '[]', '[get]'],
  ['', '[/apis]', '[]', '[get]'],
  ['', '[/healthz]', '[]', '[get]'],
  ['', '[/healthz]', '[]', '[get]'],
  ['', '[/livez]', '[]', '[get]'],
  ['', '[/livez]', '[]', '[get]'],
  ['', '[/openapi/*]', '[]', '[get]'],
  ['', '[/openapi]', '[]', '[get]'],
  ['', '[/readyz]', '[]', '[get]'],
  ['', '[/readyz]', '[]', '[get]'],
  ['', '[/version/]', '[]', '[get]'],
  ['', '[/version/]', '[]', '[get]'],
  ['', '[/version]', '[]', '[get]'],
  ['', '[/version]', '[]', '[get]'],
];
const SELF_ROWS = [
  ['selfsubjectreviews.authentication.k8s.io', '[]', '[]', '[create]'],
  ['selfsubjectaccessreviews.authorization.k8s.io', '[]', '[]', '[create]'],
  ['selfsubjectrulesreviews.authorization.k8s.io', '[]', '[]', '[create]'],
];
const HEADER = ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs'];

beforeAll(async () => {
  lab = await startTestLab({ labName: 'reviews' });
  await lab.k(['create', 'namespace', 'team']);
  await lab.k(['create', 'serviceaccount', 'bot', '-n', 'team']);
  await lab.k(['create', 'role', 'cm', '--verb=get,list', '--resource=configmaps', '-n', 'team']);
  await lab.k(['create', 'role', 'one-secret', '--verb=get', '--resource=secrets', '--resource-name=s1', '-n', 'team']);
  await lab.k(['create', 'rolebinding', 'bot-cm', '--role=cm', '--serviceaccount=team:bot', '-n', 'team']);
  await lab.k(['create', 'rolebinding', 'bot-s1', '--role=one-secret', '--serviceaccount=team:bot', '-n', 'team']);
  token = (await lab.k(['create', 'token', 'bot', '-n', 'team'])).trim();
  kc = lab.kubeconfigFor(token, 'bot');
});
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

describe('kubectl auth can-i --list', () => {
  it('lists the rules of a service account in a namespace, as on a real cluster', async () => {
    const inTeam = await lab.kubectl(['auth', 'can-i', '--list', '-n', 'team'], { kubeconfig: kc });
    expect(inTeam.stderr).toBe('');
    expect(inTeam.code).toBe(0);
    expect(rows(inTeam.stdout)).toEqual([
      HEADER,
      ...SELF_ROWS,
      ['configmaps', '[]', '[]', '[get list]'],
      ...DISCOVERY_ROWS,
      // kubectl sorts rules with resource names after the others.
      ['secrets', '[]', '[s1]', '[get]'],
    ]);
    const elsewhere = await lab.kubectl(['auth', 'can-i', '--list', '-n', 'default'], { kubeconfig: kc });
    expect(rows(elsewhere.stdout)).toEqual([HEADER, ...SELF_ROWS, ...DISCOVERY_ROWS]);
  });

  it('the admin (system:masters) gets the rules of its bindings, cluster-admin first', async () => {
    const out = rows(await lab.k(['auth', 'can-i', '--list']));
    expect(out.slice(0, 3)).toEqual([HEADER, ['*.*', '[]', '[]', '[*]'], ['', '[*]', '[]', '[*]']]);
    expect(out.slice(3)).toEqual([...SELF_ROWS, ...DISCOVERY_ROWS]);
  });

  it('a review without a namespace is 400; a binding to a missing role is reported in evaluationError', async () => {
    const review = (namespace?: string) =>
      api(lab, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        token,
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } },
      });
    const none = await review();
    expect(none.status).toBe(400);
    expect(none.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'no namespace on request' });
    await lab.k(['create', 'rolebinding', 'bot-gone', '--role=gone', '--serviceaccount=team:bot', '-n', 'team']);
    const r = await review('team');
    expect(r.status).toBe(201);
    expect(r.json.spec).toEqual({});
    expect(r.json.status.incomplete).toBe(false);
    expect(r.json.status.evaluationError).toBe('roles.rbac.authorization.k8s.io "gone" not found');
    expect(r.json.status.resourceRules).toContainEqual({
      verbs: ['get'],
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: ['s1'],
    });
  });

  it('creating a review is authorized like any create', async () => {
    // A user with no binding at all (not even system:authenticated's basic-user) may not ask.
    await lab.k(['delete', 'clusterrolebinding', 'system:basic-user']);
    try {
      const r = await lab.kubectl(['auth', 'can-i', '--list', '-n', 'team'], { kubeconfig: kc });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        'selfsubjectrulesreviews.authorization.k8s.io is forbidden: User "system:serviceaccount:team:bot" cannot create resource "selfsubjectrulesreviews" in API group "authorization.k8s.io" at the cluster scope',
      );
    } finally {
      await lab.restart();
    }
    expect((await lab.kubectl(['auth', 'can-i', '--list', '-n', 'team'], { kubeconfig: kc })).code).toBe(0);
  });
});

describe('kubectl auth whoami', () => {
  it('shows the user, uid, groups and the token credential id', async () => {
    const sa = JSON.parse(await lab.k(['get', 'sa', 'bot', '-n', 'team', '-o', 'json']));
    const jti = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti;
    const out = rows(await lab.k(['auth', 'whoami', '--kubeconfig', kc]));
    expect(out).toEqual([
      ['ATTRIBUTE', 'VALUE'],
      ['Username', 'system:serviceaccount:team:bot'],
      ['UID', sa.metadata.uid],
      ['Groups', '[system:serviceaccounts system:serviceaccounts:team system:authenticated]'],
      ['Extra: authentication.kubernetes.io/credential-id', `[JTI=${jti}]`],
    ]);
    const admin = rows(await lab.k(['auth', 'whoami']));
    expect(admin).toEqual([
      ['ATTRIBUTE', 'VALUE'],
      ['Username', 'gwlab-admin'],
      ['Groups', '[system:masters system:authenticated]'],
    ]);
  });
});
