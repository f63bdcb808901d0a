// HTTP-level behaviour: authentication, RBAC for service-account tokens, Status errors, dry-run, deletion semantics,
// watches (resume, selectors, bookmarks, 410), registered subresources (plain and upgrade) and the request log.
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressPlan, labPaths } from '../../state.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
let agent: Agent;

async function call(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; raw?: string | Buffer; ct?: string; accept?: string } = {},
) {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? lab.server.adminToken : opts.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (opts.body !== undefined || opts.raw !== undefined) headers['Content-Type'] = opts.ct ?? 'application/json';
  if (opts.accept) headers.Accept = opts.accept;
  const res = await fetch(lab.server.url + path, {
    method,
    headers,
    body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
    dispatcher: agent,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text, headers: res.headers };
}

/** Reads newline-delimited watch events until `n` non-empty events or timeout. */
async function watchEvents(
  path: string,
  n: number,
  timeoutMs = 5000,
  token?: string,
): Promise<{ events: any[]; raw: string }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  const res = await fetch(lab.server.url + path, {
    headers: { Authorization: `Bearer ${token ?? lab.server.adminToken}` },
    dispatcher: agent,
    signal: ctrl.signal,
  });
  const events: any[] = [];
  let raw = '';
  try {
    const dec = new TextDecoder();
    for await (const chunk of res.body as any) {
      raw += dec.decode(chunk);
      const lines = raw.split('\n');
      events.length = 0;
      for (const l of lines) if (l.trim()) events.push(JSON.parse(l));
      if (events.length >= n) break;
    }
  } catch {}
  clearTimeout(timer);
  ctrl.abort();
  return { events, raw };
}

const cmBody = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data: { k: 'v' },
});

beforeAll(async () => {
  lab = await startTestLab({ watchKeepAliveMs: 300, watchBookmarkMs: 500 });
  agent = new Agent({ connect: { ca: lab.server.caPem } });
  await call('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
  });
});
afterAll(async () => {
  await agent?.close();
  await lab?.stop();
});

describe('authentication', () => {
  it('no token or a bad token gets 401 Unauthorized as a Status', async () => {
    for (const token of [null, 'nope', 'eyJhbGciOiJSUzI1NiJ9.e30.AAAA']) {
      const r = await call('GET', '/api/v1/namespaces', { token });
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
    }
    expect((await call('GET', '/healthz', { token: null })).text).toBe('ok');
  });

  it('the serving certificate covers loopback, the kubernetes Service ClusterIP, extra SANs and kubernetes.default.svc', async () => {
    const { X509Certificate } = await import('node:crypto');
    const other = await startTestLab({ labName: 'sans', extraSans: ['127.77.0.9'], addressPlan: addressPlan(3) });
    try {
      const cert = new X509Certificate(readFileSync(`${labPaths('sans', other.home).pki}/apiserver.crt`));
      for (const san of [
        'IP Address:127.0.0.1',
        'IP Address:127.131.0.1',
        'IP Address:127.77.0.9',
        'DNS:kubernetes.default.svc.cluster.local',
      ])
        expect(cert.subjectAltName).toContain(san);
      expect(cert.verify(new X509Certificate(other.server.caPem).publicKey)).toBe(true);
      const svc = await fetch(`${other.server.url}/api/v1/namespaces/default/services/kubernetes`, {
        dispatcher: new Agent({ connect: { ca: other.server.caPem } }),
        headers: { Authorization: `Bearer ${other.server.adminToken}` },
      }).then((r) => r.json() as Promise<any>);
      expect(svc.spec.clusterIP).toBe('127.131.0.1');
      expect(svc.spec.ports[0]).toMatchObject({ port: 443, targetPort: other.server.port });
    } finally {
      await other.stop();
    }
  });

  it('the kubeconfig carries the admin token and context gwlab-<name>', () => {
    const kc = readFileSync(lab.server.kubeconfigPath, 'utf8');
    expect(kc).toContain(`current-context: gwlab-${lab.name}`);
    expect(kc).toContain(`token: ${lab.server.adminToken}`);
    expect(lab.server.kubeconfigPath).toBe(labPaths(lab.name, lab.home).kubeconfig);
  });
});

describe('RBAC for service-account tokens', () => {
  it('denies a verb the Role does not grant (403 naming verb and resource), allows it once granted', async () => {
    await call('POST', '/api/v1/namespaces/team/serviceaccounts', {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reader' } },
    });
    const token = lab.server.issueServiceAccountToken('team', 'reader');
    const kc = lab.kubeconfigFor(token, 'reader');
    const as = (args: string[]) => lab.kubectl(args, { kubeconfig: kc });
    await lab.k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'reader', namespace: 'team' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
      }),
    );
    await lab.k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'reader', namespace: 'team' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'team' }],
      }),
    );
    const denied = await as(['get', 'configmaps', '-n', 'team']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      'configmaps is forbidden: User "system:serviceaccount:team:reader" cannot list resource "configmaps" in API group "" in the namespace "team"',
    );
    const raw = await call('GET', '/api/v1/namespaces/team/configmaps', { token });
    expect(raw.status).toBe(403);
    expect(raw.json).toMatchObject({ reason: 'Forbidden', code: 403, details: { kind: 'configmaps' } });
    await lab.k([
      'patch',
      'role',
      'reader',
      '-n',
      'team',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/rules/0/verbs/-","value":"list"}]',
    ]);
    const allowed = await as(['get', 'configmaps', '-n', 'team', '-o', 'name']);
    expect(allowed.code, allowed.stderr).toBe(0);
    // Other namespaces and cluster-scoped resources stay forbidden; discovery is allowed to every authenticated user.
    expect((await as(['get', 'configmaps', '-n', 'default'])).stderr).toMatch(
      /cannot list resource "configmaps" in API group "" in the namespace "default"/,
    );
    expect((await as(['get', 'namespaces'])).stderr).toMatch(
      /cannot list resource "namespaces" in API group "" at the cluster scope/,
    );
    expect((await as(['api-resources', '--api-group=apps'])).code).toBe(0);
    // A ClusterRole through a ClusterRoleBinding, and the admin token bypassing RBAC.
    await lab.k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'reader-view' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'team' }],
      }),
    );
    expect((await as(['get', 'deployments', '-A'])).code).toBe(0);
    expect((await as(['get', 'secrets', '-n', 'team'])).code).not.toBe(0);
  });

  it('tokens stop working when their service account is deleted; TokenRequest issues tokens', async () => {
    await call('POST', '/api/v1/namespaces/team/serviceaccounts', {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tmp' } },
    });
    const tr = await call('POST', '/api/v1/namespaces/team/serviceaccounts/tmp/token', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    });
    expect(tr.status).toBe(201);
    const token = tr.json.status.token;
    const who = await call('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      token,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(who.json.status.userInfo.username).toBe('system:serviceaccount:team:tmp');
    await call('DELETE', '/api/v1/namespaces/team/serviceaccounts/tmp');
    expect((await call('GET', '/version', { token })).status).toBe(401);
  });
});

describe('errors are Status objects and never crash the server', () => {
  it('NotFound, AlreadyExists, Conflict, Invalid, BadRequest, MethodNotAllowed, UnsupportedMediaType, 413', async () => {
    const nf = await call('GET', '/api/v1/namespaces/team/configmaps/missing');
    expect(nf.json).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      code: 404,
      message: 'configmaps "missing" not found',
      details: { name: 'missing', kind: 'configmaps' },
    });
    const dnf = await call('GET', '/apis/apps/v1/namespaces/team/deployments/missing');
    expect(dnf.json.message).toBe('deployments.apps "missing" not found');
    expect((await call('GET', '/apis/nope.example/v1/things')).json).toMatchObject({ reason: 'NotFound', code: 404 });
    expect((await call('GET', '/api/v1/frobs')).status).toBe(404);

    const created = await call('POST', '/api/v1/namespaces/team/configmaps', { body: cmBody('e1') });
    expect(created.status).toBe(201);
    const dup = await call('POST', '/api/v1/namespaces/team/configmaps', { body: cmBody('e1') });
    expect(dup.json).toMatchObject({ reason: 'AlreadyExists', code: 409, message: 'configmaps "e1" already exists' });

    const stale = { ...created.json, metadata: { ...created.json.metadata, resourceVersion: '1' }, data: { k: 'x' } };
    const conflict = await call('PUT', '/api/v1/namespaces/team/configmaps/e1', { body: stale });
    expect(conflict.json).toMatchObject({ reason: 'Conflict', code: 409 });
    expect(conflict.json.message).toBe(
      'Operation cannot be fulfilled on configmaps "e1": the object has been modified; please apply your changes to the latest version and try again',
    );

    const invalid = await call('POST', '/api/v1/namespaces/team/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c' }] } },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json.reason).toBe('Invalid');
    const fields = invalid.json.details.causes.map((c: any) => c.field);
    expect(fields).toContain('metadata.name');
    expect(fields).toContain('spec.containers[0].image');

    for (const raw of ['{"apiVersion":', 'not json at all', '[1,2', '\u0000\u0001']) {
      const r = await call('POST', '/api/v1/namespaces/team/configmaps', { raw });
      expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    }
    const yamlBad = await call('POST', '/api/v1/namespaces/team/configmaps', {
      raw: 'a: [b\n  c: d: e',
      ct: 'application/yaml',
    });
    expect(yamlBad.json).toMatchObject({ reason: 'BadRequest', code: 400 });
    const notObject = await call('POST', '/api/v1/namespaces/team/configmaps', { raw: '"a string"' });
    expect(notObject.status).toBe(400);
    const strict = await call('POST', '/api/v1/namespaces/team/configmaps?fieldValidation=Strict', {
      body: { ...cmBody('e2'), bogus: 1 },
    });
    expect(strict.json).toMatchObject({ reason: 'BadRequest', code: 400 });
    expect(strict.json.message).toContain('unknown field "bogus"');
    const warn = await call('POST', '/api/v1/namespaces/team/configmaps', { body: { ...cmBody('e3'), bogus: 1 } });
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toContain('unknown field \\"bogus\\"');
    expect(warn.json.bogus).toBeUndefined();

    expect((await call('POST', '/api/v1/namespaces/team/configmaps/e1', { body: cmBody('e1') })).json).toMatchObject({
      reason: 'MethodNotAllowed',
      code: 405,
    });
    const smp = await call('PATCH', '/api/v1/namespaces/team/configmaps/e1', { raw: '{}', ct: 'text/plain' });
    expect(smp.json).toMatchObject({ reason: 'UnsupportedMediaType', code: 415 });

    const big = await call('POST', '/api/v1/namespaces/team/configmaps', {
      raw: JSON.stringify({ ...cmBody('big'), data: { k: 'x'.repeat(4 * 1024 * 1024) } }),
    });
    expect(big.json).toMatchObject({ reason: 'RequestEntityTooLarge', code: 413 });
    // Still serving.
    expect((await call('GET', '/api/v1/namespaces/team/configmaps/e1')).status).toBe(200);
  });

  it('hundreds of malformed requests all get Status answers; the server keeps serving', async () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const junk = () =>
      [
        '{',
        '[]',
        'null',
        '1',
        '"x"',
        '{"metadata":1}',
        '{"metadata":{"name":{}}}',
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"z","labels":{"a":["b"]}},"data":{"k":{}}}',
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{"containers":"nope"}}',
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q2"},"spec":{"containers":[{"name":"c","image":"i","ports":"x","env":{"a":1}}],"volumes":[1]}}',
        '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"80"}]}]}}}}',
        '[{"op":"replace","path":"/nope/x","value":1}]',
        '[{"op":"bogus"}]',
        '{"spec":{"$patch":"delete"}}',
        'a: [b',
        '\u0000\u00ff',
        JSON.stringify({ metadata: { name: 'y'.repeat(300) } }),
      ][rnd(17)];
    const paths = [
      '/api/v1/namespaces/fuzz/configmaps',
      '/api/v1/namespaces/fuzz/configmaps/e1',
      '/api/v1/namespaces/fuzz/pods',
      '/api/v1/namespaces/fuzz/pods/x/status',
      '/apis/apps/v1/namespaces/fuzz/deployments',
      '/apis/apps/v1/namespaces/fuzz/deployments/x/scale',
      '/api/v1/namespaces/fuzz/configmaps?labelSelector=a%20in%20(',
      '/api/v1/namespaces/fuzz/configmaps?fieldSelector=%3D%3D',
      '/api/v1/namespaces/fuzz/configmaps?continue=%%%',
      '/api/v1/namespaces/fuzz/configmaps?watch=true&resourceVersion=abc',
      '/api/v1/namespaces/fuzz/configmaps?limit=-5',
      '/api/v1/namespaces/fuzz/configmaps?dryRun=Some',
      '/api/v1/namespaces/fuzz/configmaps?fieldValidation=Loud',
      '/api/v1/namespaces/fuzz/configmaps/e1?propagationPolicy=Sideways',
      '/apis/example.com/v1/widgets',
      '/api/v1/namespaces/%ZZ/configmaps',
      '/api//v1///',
      '/openapi/v3/apis/nope/v1',
    ];
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const cts = [
      'application/json',
      'application/yaml',
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
      'text/html',
    ];
    // Its own namespace: the sweep deletes and overwrites what it finds.
    await call('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fuzz' } },
    });
    await call('POST', '/api/v1/namespaces/fuzz/configmaps', { body: cmBody('e1') });
    const codes = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const method = methods[rnd(5)];
      const path = paths[rnd(paths.length)];
      const ct = cts[rnd(cts.length)];
      const r = await call(method, path.includes('watch=true') ? `${path}&timeoutSeconds=1` : path, {
        raw: method === 'GET' || method === 'DELETE' ? undefined : junk(),
        ct,
      });
      codes.add(r.status);
      expect(r.status, `${method} ${path}`).toBeLessThan(500);
      if (r.status >= 400)
        expect(r.json, `${method} ${path} ${r.text.slice(0, 100)}`).toMatchObject({ kind: 'Status', code: r.status });
    }
    expect(codes.size).toBeGreaterThan(4);
    expect((await call('GET', '/api/v1/namespaces/team')).status).toBe(200);
  });

  it('dryRun=All validates and answers without writing', async () => {
    const before = lab.server.revision();
    const c = await call('POST', '/api/v1/namespaces/team/configmaps?dryRun=All', { body: cmBody('dry') });
    expect(c.status).toBe(201);
    expect(c.json.metadata.uid).toBeTruthy();
    const d = await call('DELETE', '/api/v1/namespaces/team/configmaps/e1?dryRun=All');
    expect(d.status).toBe(200);
    expect(lab.server.revision()).toBe(before);
    expect((await call('GET', '/api/v1/namespaces/team/configmaps/dry')).status).toBe(404);
    expect((await call('GET', '/api/v1/namespaces/team/configmaps/e1')).status).toBe(200);
  });
});

describe('delete preconditions', () => {
  it('a uid or resourceVersion precondition that does not match is a 409 Conflict naming both; a matching one deletes', async () => {
    const c = await call('POST', '/api/v1/namespaces/team/configmaps', { body: cmBody('pre') });
    expect(c.status).toBe(201);
    const { uid, resourceVersion } = c.json.metadata;
    const del = (preconditions: object) =>
      call('DELETE', '/api/v1/namespaces/team/configmaps/pre', {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions },
      });
    const byUid = await del({ uid: 'not-the-uid' });
    expect(byUid.status).toBe(409);
    expect(byUid.json.message).toContain(
      `Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${uid}`,
    );
    const byRv = await del({ uid, resourceVersion: '1' });
    expect(byRv.status).toBe(409);
    expect(byRv.json.message).toContain(
      `Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${resourceVersion}`,
    );
    expect((await del({ uid, resourceVersion })).status).toBe(200);
    expect((await call('GET', '/api/v1/namespaces/team/configmaps/pre')).status).toBe(404);
  });
});

describe('secrets', () => {
  it('stringData is write-only: merged into data as base64, its keys winning, on create and on patch', async () => {
    const c = await call('POST', '/api/v1/namespaces/team/secrets', {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'sd' },
        data: { a: Buffer.from('from-data').toString('base64'), b: Buffer.from('kept').toString('base64') },
        stringData: { a: 'from-stringData', c: 'plain' },
      },
    });
    expect(c.status).toBe(201);
    const decoded = (d: Record<string, string>) =>
      Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    const got = (await call('GET', '/api/v1/namespaces/team/secrets/sd')).json;
    expect(got.stringData).toBeUndefined();
    expect(decoded(got.data)).toEqual({ a: 'from-stringData', b: 'kept', c: 'plain' });
    const p = await call('PATCH', '/api/v1/namespaces/team/secrets/sd', {
      body: { stringData: { b: 'patched' } },
      ct: 'application/merge-patch+json',
    });
    expect(p.status).toBe(200);
    expect(p.json.stringData).toBeUndefined();
    expect(decoded(p.json.data)).toEqual({ a: 'from-stringData', b: 'patched', c: 'plain' });
  });
});

describe('list paging (limit/continue)', () => {
  it('later pages show the list as of the first page; bad tokens are 400, tokens older than the history 410', async () => {
    // Its own server with the smallest history (1,000 revisions), so a token can be made to expire.
    const small = await startTestLab({ labName: 'paging', watchHistory: 1000 });
    let a = new Agent({ connect: { ca: small.server.caPem }, connections: 16 });
    const req = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(small.server.url + path, {
        method,
        dispatcher: a,
        headers: { Authorization: `Bearer ${small.server.adminToken}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as any };
    };
    const cm = (name: string, v: string) => ({ ...cmBody(name), data: { v } });
    const base = '/api/v1/namespaces/default/configmaps';
    const names = (l: any) => l.items.map((i: any) => i.metadata.name);
    try {
      for (let i = 0; i < 7; i++) expect((await req('POST', base, cm(`p${i}`, 'old'))).status).toBe(201);
      const first = await req('GET', `${base}?limit=3`);
      expect(names(first.json)).toEqual(['p0', 'p1', 'p2']);
      expect(first.json.metadata.continue).toEqual(expect.any(String));
      const rv = first.json.metadata.resourceVersion;
      // Writes between pages: none of them shows in the pages that follow (Kubernetes reads them at the first
      // page's revision), so the pages add up to one consistent list.
      await req('DELETE', `${base}/p4`);
      await req('PUT', `${base}/p5`, cm('p5', 'new'));
      await req('POST', base, cm('p3a', 'new'));
      const second = await req('GET', `${base}?limit=3&continue=${first.json.metadata.continue}`);
      expect(second.status).toBe(200);
      expect(names(second.json)).toEqual(['p3', 'p4', 'p5']);
      expect(second.json.items.map((i: any) => i.data.v)).toEqual(['old', 'old', 'old']);
      expect(second.json.metadata.resourceVersion).toBe(rv);
      const third = await req('GET', `${base}?limit=3&continue=${second.json.metadata.continue}`);
      expect(names(third.json)).toEqual(['p6']);
      expect(third.json.metadata.continue).toBeUndefined();
      // A new list shows the writes.
      const now = await req('GET', base);
      expect(names(now.json)).toEqual(['p0', 'p1', 'p2', 'p3', 'p3a', 'p5', 'p6']);
      expect(Number(now.json.metadata.resourceVersion)).toBeGreaterThan(Number(rv));

      // Tokens that are not tokens: 400 BadRequest.
      for (const bad of [
        '%%%',
        'bm90LWpzb24',
        Buffer.from('{"v":"meta.k8s.io/v1","rv":0,"start":"x"}').toString('base64url'),
      ]) {
        const r = await req('GET', `${base}?limit=3&continue=${bad}`);
        expect(r.status, bad).toBe(400);
        expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
        expect(r.json.message).toMatch(/continue key is not valid/);
      }

      // Over 1,000 revisions later the first page's revision has left the history: 410 Expired, with a token that
      // continues (inconsistently) at the latest revision, which then shows the writes made in between.
      const stale = (await req('GET', `${base}?limit=2`)).json.metadata.continue;
      const post = (n: number) => req('POST', '/api/v1/namespaces/kube-public/configmaps', cm(`f${n}`, 'x'));
      for (let i = 0; i < 1010; i += 101) await Promise.all(Array.from({ length: 101 }, (_, j) => post(i + j)));
      await req('DELETE', `${base}/p6`);
      const expired = await req('GET', `${base}?limit=2&continue=${stale}`);
      expect(expired.status).toBe(410);
      expect(expired.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
      expect(expired.json.message).toMatch(/^The provided continue parameter is too old/);
      const rest = await req('GET', `${base}?limit=10&continue=${expired.json.metadata.continue}`);
      expect(rest.status).toBe(200);
      expect(names(rest.json)).toEqual(['p2', 'p3', 'p3a', 'p5']);

      // A token from before a restart has expired too (the history rebuilt from the log cannot restore every
      // object's earlier state).
      const before = (await req('GET', `${base}?limit=2`)).json.metadata.continue;
      await req('DELETE', `${base}/p5`);
      await small.restart();
      await a.close();
      a = new Agent({ connect: { ca: small.server.caPem } });
      const afterRestart = await req('GET', `${base}?limit=2&continue=${before}`);
      expect(afterRestart.status).toBe(410);
      // ... while one issued since is served at its revision.
      const fresh = (await req('GET', `${base}?limit=2`)).json.metadata.continue;
      await req('DELETE', `${base}/p3`);
      expect(names((await req('GET', `${base}?limit=10&continue=${fresh}`)).json)).toEqual(['p2', 'p3', 'p3a']);
    } finally {
      await a.close();
      await small.stop();
    }
  });
});

describe('delete semantics', () => {
  it('finalizers hold an object with a deletionTimestamp until they are removed', async () => {
    await call('POST', '/api/v1/namespaces/team/configmaps', {
      body: { ...cmBody('fin'), metadata: { name: 'fin', finalizers: ['example.com/x'] } },
    });
    const d = await call('DELETE', '/api/v1/namespaces/team/configmaps/fin');
    expect(d.status).toBe(200);
    expect(d.json.metadata.deletionTimestamp).toBeTruthy();
    const added = await call('PATCH', '/api/v1/namespaces/team/configmaps/fin', {
      raw: '{"metadata":{"finalizers":["example.com/x","example.com/y"]}}',
      ct: 'application/merge-patch+json',
    });
    expect(added.status).toBe(422);
    await call('PATCH', '/api/v1/namespaces/team/configmaps/fin', {
      raw: '{"metadata":{"finalizers":null}}',
      ct: 'application/merge-patch+json',
    });
    expect((await call('GET', '/api/v1/namespaces/team/configmaps/fin')).status).toBe(404);
  });

  it('pods on a node are deleted gracefully (the kubelet finishes); unscheduled pods at once', async () => {
    const pod = (name: string, node?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'c', image: 'x:1' }] },
    });
    await call('POST', '/api/v1/namespaces/team/pods', { body: pod('p1') });
    await call('DELETE', '/api/v1/namespaces/team/pods/p1');
    expect((await call('GET', '/api/v1/namespaces/team/pods/p1')).status).toBe(404);
    await call('POST', '/api/v1/namespaces/team/pods', { body: pod('p2', 'node-1') });
    const d = await call('DELETE', '/api/v1/namespaces/team/pods/p2');
    expect(d.json.metadata.deletionGracePeriodSeconds).toBe(30);
    expect((await call('GET', '/api/v1/namespaces/team/pods/p2')).status).toBe(200);
    await call('DELETE', '/api/v1/namespaces/team/pods/p2', {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 },
    });
    expect((await call('GET', '/api/v1/namespaces/team/pods/p2')).status).toBe(404);
  });

  it('deletecollection deletes what the selector matches', async () => {
    for (const n of ['dc1', 'dc2', 'dc3'])
      await call('POST', '/api/v1/namespaces/team/configmaps', { body: cmBody(n, { batch: n === 'dc3' ? 'b' : 'a' }) });
    const r = await call('DELETE', '/api/v1/namespaces/team/configmaps?labelSelector=batch%3Da');
    expect(r.status).toBe(200);
    const left = await call('GET', '/api/v1/namespaces/team/configmaps?labelSelector=batch');
    expect(left.json.items.map((i: any) => i.metadata.name)).toEqual(['dc3']);
  });
});

describe('watch', () => {
  it('resumes from a resourceVersion, reports selector transitions, sends bookmarks and keep-alives', async () => {
    const first = await call('POST', '/api/v1/namespaces/team/configmaps', { body: cmBody('w1', { watch: 'yes' }) });
    const rv = first.json.metadata.resourceVersion;
    await call('PATCH', '/api/v1/namespaces/team/configmaps/w1', {
      raw: '{"data":{"k":"2"}}',
      ct: 'application/merge-patch+json',
    });
    await call('PATCH', '/api/v1/namespaces/team/configmaps/w1', {
      raw: '{"metadata":{"labels":{"watch":"no"}}}',
      ct: 'application/merge-patch+json',
    });
    const { events } = await watchEvents(
      `/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=${rv}&labelSelector=watch%3Dyes&allowWatchBookmarks=true`,
      3,
    );
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED', 'BOOKMARK']);
    expect(events[1].object.metadata.labels.watch).toBe('no');
    expect(events[2].object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
    expect(Number(events[2].object.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
    const idle = await watchEvents(
      `/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=${lab.server.revision()}&labelSelector=none`,
      99,
      1200,
    );
    expect(idle.events).toHaveLength(0);
    expect(idle.raw).toMatch(/^\n+$/);
  });

  it('without resourceVersion it starts with ADDED for current objects; expired versions get 410 as an ERROR event', async () => {
    const { events } = await watchEvents(
      '/api/v1/namespaces/team/configmaps?watch=true&fieldSelector=metadata.name%3De1',
      1,
    );
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'e1' } } });
    // Push the oldest revision beyond history (1,000 events minimum is configured in the server; use a fresh lab).
    const small = await startTestLab({ watchHistory: 1000 });
    try {
      const a2 = new Agent({ connect: { ca: small.server.caPem } });
      for (let i = 0; i < 1100; i++)
        await fetch(`${small.server.url}/api/v1/namespaces/default/configmaps`, {
          method: 'POST',
          dispatcher: a2,
          headers: { Authorization: `Bearer ${small.server.adminToken}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(cmBody(`c${i}`)),
        }).then((r) => r.text());
      const res = await fetch(`${small.server.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2`, {
        dispatcher: a2,
        headers: { Authorization: `Bearer ${small.server.adminToken}` },
      });
      expect(res.status).toBe(200);
      const ev = JSON.parse((await res.text()).trim());
      expect(ev).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
      expect(ev.object.message).toMatch(/^too old resource version: 2 \(\d+\)$/);
      // Within history: fine.
      const okRes = await fetch(
        `${small.server.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${small.server.revision() - 500}&timeoutSeconds=1`,
        {
          dispatcher: a2,
          headers: { Authorization: `Bearer ${small.server.adminToken}` },
        },
      );
      const lines = (await okRes.text()).split('\n').filter((l) => l.trim());
      expect(lines).toHaveLength(500);
      await a2.close();
    } finally {
      await small.stop();
    }
  });
});

describe('registered subresources', () => {
  it('dispatches plain requests and upgrades (GET and POST) after authentication and RBAC', async () => {
    const seen: { verb: string; user: string; upgrade: boolean; method?: string }[] = [];
    lab.server.registerSubresource('pods', 'log', ({ res, user, verb, object }) => {
      seen.push({ verb, user: user.username, upgrade: false });
      res!.writeHead(200, { 'Content-Type': 'text/plain' });
      res!.end(`log of ${object.metadata.name}\n`);
    });
    lab.server.registerSubresource('pods', 'portforward', ({ upgrade, req, user, verb }) => {
      seen.push({ verb, user: user.username, upgrade: !!upgrade, method: req.method });
      upgrade!.socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test-proto\r\n\r\n');
      upgrade!.socket.on('data', (d: Buffer) => upgrade!.socket.write(Buffer.concat([Buffer.from('echo:'), d])));
    });
    await call('POST', '/api/v1/namespaces/team/pods', {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'sub' },
        spec: { containers: [{ name: 'c', image: 'x:1' }] },
      },
    });
    expect((await lab.k(['logs', 'sub', '-n', 'team'])).trim()).toBe('log of sub');
    expect((await call('GET', '/api/v1/namespaces/team/pods/missing/log')).status).toBe(404);

    const upgrade = (method: string, token: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect(
          { host: '127.0.0.1', port: lab.server.port, ca: lab.server.caPem, servername: 'localhost' },
          () => {
            s.write(
              `${method} /api/v1/namespaces/team/pods/sub/portforward?ports=80 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: Upgrade\r\nUpgrade: test-proto\r\nContent-Length: 0\r\n\r\n`,
            );
          },
        );
        let buf = '';
        s.on('data', (d) => {
          buf += d.toString();
          if (buf.includes('\r\n\r\n') && buf.startsWith('HTTP/1.1 101') && !buf.includes('echo:')) s.write('ping');
          if (
            buf.includes('echo:ping') ||
            (buf.includes('\r\n\r\n') && !buf.startsWith('HTTP/1.1 101') && buf.includes('}'))
          ) {
            s.end();
            resolve(buf);
          }
        });
        s.on('error', reject);
      });
    for (const m of ['GET', 'POST']) {
      const out = await upgrade(m, lab.server.adminToken);
      expect(out).toMatch(/^HTTP\/1.1 101/);
      expect(out).toContain('echo:ping');
    }
    expect(seen.filter((s) => s.upgrade).map((s) => s.method)).toEqual(['GET', 'POST']);
    expect(seen.every((s) => s.user === 'gwlab-admin')).toBe(true);
    expect(seen.find((s) => s.upgrade)?.verb).toBe('create');

    await call('POST', '/api/v1/namespaces/team/serviceaccounts', {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pf' } },
    });
    const sa = lab.server.issueServiceAccountToken('team', 'pf');
    const denied = await upgrade('POST', sa);
    expect(denied).toMatch(/^HTTP\/1.1 403/);
    expect(denied).toContain(
      'cannot create resource \\"pods/portforward\\" in API group \\"\\" in the namespace \\"team\\"',
    );
    expect(await upgrade('GET', 'bad-token')).toMatch(/^HTTP\/1.1 401/);
    const discovery = await call('GET', '/api/v1');
    expect(discovery.json.resources.map((r: any) => r.name)).toEqual(
      expect.arrayContaining(['pods/log', 'pods/portforward', 'pods/status']),
    );
  });
});

describe('stop', () => {
  it('ends upgraded streams too, so nothing outlives the server', async () => {
    const other = await startTestLab();
    try {
      other.server.registerSubresource('pods', 'exec', ({ upgrade }) => {
        upgrade!.socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n');
      });
      const a = new Agent({ connect: { ca: other.server.caPem } });
      await fetch(`${other.server.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        dispatcher: a,
        headers: { Authorization: `Bearer ${other.server.adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p' },
          spec: { containers: [{ name: 'c', image: 'x:1' }] },
        }),
      }).then((r) => r.text());
      await a.close();
      const closed = new Promise<string>((resolve) => {
        const sock = connect(
          { host: '127.0.0.1', port: other.server.port, ca: other.server.caPem, servername: 'localhost' },
          () => {
            sock.write(
              `POST /api/v1/namespaces/default/pods/p/exec HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${other.server.adminToken}\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n`,
            );
          },
        );
        let got = '';
        sock.on('data', (d) => {
          got += d.toString();
          if (got.startsWith('HTTP/1.1 101')) void other.server.stop();
        });
        sock.on('close', () => resolve(got));
        sock.on('error', () => {});
      });
      expect(await closed).toMatch(/^HTTP\/1.1 101/);
    } finally {
      await other.stop();
    }
  });
});

describe('request log', () => {
  it('records every request with user, verb, resource, namespace, name, code and duration; reads write nothing', async () => {
    const log = labPaths(lab.name, lab.home).auditLog;
    const before = readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    await lab.k(['get', 'configmaps', '-n', 'team']);
    await lab.k(['get', 'configmap', 'e1', '-n', 'team', '-o', 'yaml']);
    await lab.k(['describe', 'configmap', 'e1', '-n', 'team']);
    const lines = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(before)
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(3);
    for (const l of lines) {
      expect(l).toEqual(
        expect.objectContaining({
          ts: expect.any(String),
          user: 'gwlab-admin',
          verb: expect.any(String),
          code: expect.any(Number),
          durationMs: expect.any(Number),
        }),
      );
      expect(['get', 'list', 'watch']).toContain(l.verb);
    }
    expect(lines).toContainEqual(
      expect.objectContaining({ verb: 'get', resource: 'configmaps', namespace: 'team', name: 'e1', code: 200 }),
    );
    await lab.kubectl(['delete', 'configmap', 'e1', '-n', 'team']);
    const after = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(after).toContainEqual(
      expect.objectContaining({ verb: 'delete', resource: 'configmaps', name: 'e1', code: 200 }),
    );
    expect(after).toContainEqual(expect.objectContaining({ code: 401, user: '' }));
  });
});
