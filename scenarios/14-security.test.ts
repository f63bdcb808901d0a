// Security (issue 16): the lines Kubernetes and Envoy hold, shown end to end on the lab as a user meets them.
// - RBAC escalation prevention (kube-apiserver pkg/registry/rbac/validation, escalation_check.go): a ServiceAccount
//   that may create RoleBindings cannot bind cluster-admin (403, nothing stored) until it has `bind` on that role; one
//   that may create Roles cannot write rules it does not hold until it has `escalate`.
// - Tokens (kube-apiserver --api-audiences; TokenRequest validation): a token for another audience is 401; `kubectl
//   create token` lasts 3,600 s by default, an explicit --duration is honoured, under 10 minutes is refused.
// - `kubectl auth can-i --list` and `kubectl auth whoami` answer for a ServiceAccount; a 254-character name is refused
//   with the length limit.
// - Contract section 4 ("Neither interface is reached from outside by default. A port-forward to localhost is used to
//   reach it") seen from another pod: from a process of the sample application's pod, the gateway proxy's admin
//   (19000) and the control plane's admin (9095) do not answer on their pod IPs, so a POST /quitquitquit cannot stop a
//   gateway; what Prometheus scrapes does answer there, and nothing more: the proxy's 9091 /metrics (kgateway's stats
//   listener: the admin's /stats/prometheus) and the control plane's 9092 /metrics. Both admins still answer through a
//   port-forward. In a real cluster this is the pod network namespace's doing; on the embedded node, the pod loopback
//   of the runtime hook (lab/embedded/node/README.md, "Network identity").
// - The proxy routes an absolute-form request (RFC 9112 section 3.2.2) by the URI's authority, as Envoy does
//   (allow_absolute_url, on by default).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminSession,
  controlPlaneSelector,
  GATEWAY_NAME_LABEL,
  openControlPlaneAdmin,
  openProxyAdmin,
} from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import type { KObj } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const APP_NS = 'sampleapp';
const lab = useLab();
const ns = uniqueName('s14-adminlocal');
const resources = namespaceWithGateway(ns);
const rbacNs = uniqueName('s14-rbac');
const webNs = uniqueName('s14-web');
artifactNamespaces(ns, APP_NS, rbacNs, webNs);

/** Runs in the sample application's pod: each request's status and the first line of its body, or the error code. */
const PROBE = `
const targets = JSON.parse(process.argv[1]);
const out = {};
for (const [name, [method, url]] of Object.entries(targets)) {
  try {
    const r = await fetch(url, { method, signal: AbortSignal.timeout(5000) });
    out[name] = { status: r.status, first: (await r.text()).split('\\n').find((l) => !l.startsWith('#')) ?? '' };
  } catch (e) {
    out[name] = { error: e?.cause?.code ?? e?.name ?? String(e) };
  }
}
console.log(JSON.stringify(out));
`;

const isReady = (p: KObj) => !!p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

async function readyPod(namespace: string, selector: string): Promise<KObj> {
  return waitFor(`a Ready pod ${selector} in ${namespace}`, async () => {
    const pods = (await lab.kube.list('v1', 'Pod', namespace, selector)).filter(
      (p) => isReady(p) && !p.metadata?.deletionTimestamp,
    );
    return { ok: pods.length > 0, value: pods[0], seen: pods.map((p) => p.status?.phase) };
  });
}

describe('admin interfaces are pod-local; metrics are scrapeable (contract 4)', () => {
  let proxy: KObj;
  let cp: KObj;
  let seen: Record<string, { status?: number; first?: string; error?: string }>;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    proxy = await readyPod(ns, `${GATEWAY_NAME_LABEL}=gw`);
    cp = await readyPod('gwvendor-system', await controlPlaneSelector(lab.kube));
    const app = await readyPod(APP_NS, 'app=sampleapp');
    const gwIP = proxy.status!.podIP;
    const cpIP = cp.status!.podIP;
    const targets = {
      proxyQuit: ['POST', `http://${gwIP}:19000/quitquitquit`],
      proxyAdmin: ['GET', `http://${gwIP}:19000/ready`],
      cpAdmin: ['GET', `http://${cpIP}:9095/snapshots/xds`],
      proxyMetrics: ['GET', `http://${gwIP}:9091/metrics`],
      proxyMetricsQuit: ['POST', `http://${gwIP}:9091/quitquitquit`],
      proxyMetricsStats: ['GET', `http://${gwIP}:9091/stats/prometheus`],
      cpMetrics: ['GET', `http://${cpIP}:9092/metrics`],
      cpMetricsAdmin: ['GET', `http://${cpIP}:9092/snapshots/xds`],
    };
    const r = await lab.kubectl([
      'exec',
      '-n',
      APP_NS,
      app.metadata!.name!,
      '--',
      'node',
      '--input-type=module',
      '-e',
      PROBE,
      JSON.stringify(targets),
    ]);
    if (r.code !== 0) throw new Error(`kubectl exec failed (${r.code}): ${r.stderr}`);
    seen = JSON.parse(r.stdout);
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') await lab.kube.delete(resources, { wait: true }).catch(() => undefined);
  });

  it("refuses another pod on the proxy's 19000 and the control plane's 9095: /quitquitquit stops nothing", async () => {
    expect(seen.proxyQuit).toEqual({ error: 'ECONNREFUSED' });
    expect(seen.proxyAdmin).toEqual({ error: 'ECONNREFUSED' });
    expect(seen.cpAdmin).toEqual({ error: 'ECONNREFUSED' });
    const now = await lab.kube.get('v1', 'Pod', proxy.metadata!.name!, ns);
    expect(isReady(now!)).toBe(true);
    expect(now!.status!.containerStatuses[0].restartCount).toBe(proxy.status!.containerStatuses[0].restartCount);
  });

  it('serves /metrics and nothing else to another pod: the proxy on 9091, the control plane on 9092', () => {
    expect(seen.proxyMetrics.status).toBe(200);
    expect(seen.proxyMetrics.first).toMatch(/^envoy_\w+/);
    expect(seen.proxyMetricsQuit.status).toBe(404);
    expect(seen.proxyMetricsStats.status).toBe(404);
    expect(seen.cpMetrics.status).toBe(200);
    expect(seen.cpMetrics.first).toMatch(/^gwvendor_\w+|^process_\w+/);
    expect(seen.cpMetricsAdmin.status).toBe(404);
  });

  it('still serves both admins through a port-forward', async () => {
    const sessions: AdminSession[] = [];
    try {
      sessions.push(await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' }));
      sessions.push(await openControlPlaneAdmin(lab.kube));
      const ready = await sessions[0].get('/ready');
      expect([ready.status, ready.text.trim()]).toEqual([200, 'LIVE']);
      expect((await sessions[1].get('/snapshots/xds')).status).toBe(200);
    } finally {
      for (const s of sessions) await s.close();
    }
  });
});

/** The claims of a JWT (no verification: the test reads what the server issued). */
function claims(token: string): { aud: string[]; exp: number; iat: number; sub: string } {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

describe("the API server holds Kubernetes' lines: RBAC escalation, tokens, reviews, names", () => {
  /** kubectl as a ServiceAccount of rbacNs: the lab's kubeconfig for the server, the token for the identity. */
  const as = (token: string, args: string[]) => lab.kubectl([`--token=${token}`, ...args]);
  const tokenFor = async (sa: string, extra: string[] = []) =>
    (await lab.k(['create', 'token', sa, '-n', rbacNs, ...extra])).trim();

  beforeAll(async () => {
    await lab.kube.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: ${rbacNs}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: binder, namespace: ${rbacNs}}
---
# binder may create RoleBindings and Roles in its namespace, and read them back: nothing more.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-writer, namespace: ${rbacNs}}
rules:
- {apiGroups: [rbac.authorization.k8s.io], resources: [rolebindings, roles], verbs: [create, get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: binder-writes-rbac, namespace: ${rbacNs}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rbac-writer}
subjects: [{kind: ServiceAccount, name: binder, namespace: ${rbacNs}}]
`);
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') {
      await lab.k(['delete', 'namespace', rbacNs, '--wait=false']).catch(() => undefined);
      await lab.k(['delete', 'clusterrole,clusterrolebinding', `${rbacNs}-bind-admin`]).catch(() => undefined);
    }
  });

  it('refuses a RoleBinding to cluster-admin from a ServiceAccount that may only create RoleBindings, until it has bind', async () => {
    const token = await tokenFor('binder');
    const bind = [
      'create',
      'rolebinding',
      'escalate',
      '--clusterrole=cluster-admin',
      `--serviceaccount=${rbacNs}:binder`,
      '-n',
      rbacNs,
    ];
    const refused = await as(token, bind);
    expect(refused.code, refused.stdout).not.toBe(0);
    expect(refused.stderr).toContain('is attempting to grant RBAC permissions not currently held');
    expect(refused.stderr).toMatch(/forbidden/i);
    // Nothing was stored, and binder is still not admin.
    expect((await lab.kubectl(['get', 'rolebinding', 'escalate', '-n', rbacNs])).stderr).toContain('NotFound');
    expect((await as(token, ['auth', 'can-i', 'delete', 'secrets', '-n', rbacNs])).stdout.trim()).toBe('no');

    // `bind` on exactly that ClusterRole (resourceNames) grants what Kubernetes grants: the binding, then its rights.
    await lab.kube.apply(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${rbacNs}-bind-admin}
rules: [{apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [bind], resourceNames: [cluster-admin]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${rbacNs}-bind-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${rbacNs}-bind-admin}
subjects: [{kind: ServiceAccount, name: binder, namespace: ${rbacNs}}]
`);
    const granted = await as(token, bind);
    expect(granted.code, granted.stderr).toBe(0);
    expect((await as(token, ['auth', 'can-i', 'delete', 'secrets', '-n', rbacNs])).stdout.trim()).toBe('yes');
  });

  it('refuses a Role with rules its writer does not hold, until the writer has escalate', async () => {
    // A fresh ServiceAccount with rbac-writer only (binder is admin in the namespace by now).
    await lab.kube.apply(`
apiVersion: v1
kind: ServiceAccount
metadata: {name: author, namespace: ${rbacNs}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: author-writes-rbac, namespace: ${rbacNs}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rbac-writer}
subjects: [{kind: ServiceAccount, name: author, namespace: ${rbacNs}}]
`);
    const token = await tokenFor('author');
    const create = ['create', 'role', 'secret-reader', '--verb=get', '--resource=secrets', '-n', rbacNs];
    const refused = await as(token, create);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('is attempting to grant RBAC permissions not currently held');
    expect((await lab.kubectl(['get', 'role', 'secret-reader', '-n', rbacNs])).stderr).toContain('NotFound');

    await lab.kube.apply(`
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-escalate, namespace: ${rbacNs}}
rules: [{apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: author-escalates, namespace: ${rbacNs}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rbac-escalate}
subjects: [{kind: ServiceAccount, name: author, namespace: ${rbacNs}}]
`);
    const granted = await as(token, create);
    expect(granted.code, granted.stderr).toBe(0);
  });

  it('accepts only tokens for its own audience, 3,600 s by default, never under 10 minutes', async () => {
    const plain = await tokenFor('binder');
    expect(claims(plain).exp - claims(plain).iat).toBe(3600);
    const twoHours = await tokenFor('binder', ['--duration=2h']);
    expect(claims(twoHours).exp - claims(twoHours).iat).toBe(7200);

    const short = await lab.kubectl(['create', 'token', 'binder', '-n', rbacNs, '--duration=1m']);
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain('spec.expirationSeconds');
    expect(short.stderr).toContain('may not specify a duration less than 10 minutes');

    const vault = await tokenFor('binder', ['--audience=https://vault.example.com']);
    expect(claims(vault).aud).toEqual(['https://vault.example.com']);
    const r = await as(vault, ['get', 'rolebindings', '-n', rbacNs]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Unauthorized/);
    expect((await as(plain, ['get', 'rolebindings', '-n', rbacNs])).code).toBe(0);
  });

  it('answers kubectl auth can-i --list and auth whoami for a ServiceAccount', async () => {
    const token = await tokenFor('author');
    const list = await as(token, ['auth', 'can-i', '--list', '-n', rbacNs]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/m);
    expect(list.stdout).toMatch(/^roles\.rbac\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[.*create.*\]/m);
    expect(list.stdout).toMatch(/^selfsubjectrulesreviews\.authorization\.k8s\.io/m);
    const who = await as(token, ['auth', 'whoami']);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toMatch(new RegExp(`Username\\s+system:serviceaccount:${rbacNs}:author`));
  });

  it('refuses a 254-character name with the 253-character limit, and stores nothing', async () => {
    const name = 'a'.repeat(254);
    const r = await lab.kubectl(['create', 'configmap', name, '-n', rbacNs]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('must be no more than 253 characters');
    expect(r.stderr).not.toContain('regex used for validation');
    const cms = await lab.kube.list('v1', 'ConfigMap', rbacNs);
    expect(cms.map((c) => c.metadata?.name)).not.toContain(name);
  });
});

/**
 * One HTTP/1.1 request whose request-target is `target` as written (Node's client sends `path` verbatim, which is how
 * it talks to forward proxies: an absolute URI there gives the absolute form).
 */
function requestTarget(url: string, target: string, host: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: hostname, port: Number(port), path: target, headers: { host }, agent: false, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

describe('the proxy routes an absolute-form request by its authority, as Envoy does', () => {
  const host = 's14.example.com';
  let url: string;

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(webNs, host));
    await lab.kube.apply(sampleBackend(webNs));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', webNs, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, webNs, 'gw', 8080);
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', webNs, '--wait=false']).catch(() => undefined);
  });

  it('GET http://<route host>/headers with another Host header reaches the route, Host rewritten to the authority', async () => {
    const abs = await requestTarget(url, `http://${host}/headers?via=absolute`, 'not-a-route.example');
    expect(abs.status, abs.body).toBe(200);
    expect(JSON.parse(abs.body).headers.Host).toEqual([host]);
    // The same Host in an origin-form request matches no route: it was the authority that routed.
    const origin = await requestTarget(url, '/headers', 'not-a-route.example');
    expect(origin.status).toBe(404);
  });
});
