// system/controlplane/kube/transport.ts against the embedded API server: client-node 2.0.1 alone opens a new TLS
// connection for every request (its applySecurityAuthentication builds a new undici Agent each time, dist/config.js);
// with withTransport a KubeConfig's requests share kept-alive connections, as client-go's transports do
// (k8s.io/client-go/transport/cache.go), while the per-request credentials (a renewed token file) and TLS material (a
// renewed CA file) are still honoured. Connections are counted on undici's documented diagnostics channel
// 'undici:client:connected' (docs/api/DiagnosticsChannel.md), filtered to the test server's port. Then the HTTP layer
// of API clients (undici's request() instead of fetch()), against a plain HTTP server that shows what it receives:
// the same headers as fetch's (but for fetch's own sec-fetch-mode), gzip bodies decoded, fetch's error shape.
import { type ChildProcess, spawn } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { renameSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ApiException, AuthenticationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { reloadTokenFileOnChange } from '../../system/controlplane/kube/token-file.ts';
import { closeTransport, withTransport } from '../../system/controlplane/kube/transport.ts';

/** The sockets undici connects to `port` while this watcher is on. */
function watchConnections(port: number) {
  const sockets: Socket[] = [];
  const ch = diagnostics.channel('undici:client:connected');
  const onMessage = (m: unknown) => {
    const { socket, connectParams } = m as { socket: Socket; connectParams: { port: string | number } };
    if (Number(connectParams.port) === port) sockets.push(socket);
  };
  ch.subscribe(onMessage);
  return { sockets, stop: () => ch.unsubscribe(onMessage) };
}

const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

describe('kept-alive connections of a KubeConfig (kube/transport.ts)', () => {
  let lab: TestLab;
  let watcher: ReturnType<typeof watchConnections>;
  const kcs: KubeConfig[] = [];
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    lab = await startTestLab({ labName: 'conns' });
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    watcher?.stop();
    await Promise.all(kcs.splice(0).map((kc) => closeTransport(kc)));
  });
  afterAll(() => lab?.stop());

  async function kubeConfig(): Promise<KubeConfig> {
    const kc = await lab.server.kubeConfig();
    kcs.push(kc);
    return kc;
  }

  it('client-node alone opens a new connection for every request (why transport.ts exists)', async () => {
    const kc = await kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    watcher = watchConnections(lab.server.port);
    for (let i = 0; i < 5; i++) await core.readNamespace({ name: 'default' });
    expect(watcher.sockets).toHaveLength(5);
  });

  it('with withTransport requests reuse kept-alive connections, API clients made before and after alike', async () => {
    const kc = await kubeConfig();
    const before = kc.makeApiClient(CoreV1Api);
    withTransport(kc);
    expect(withTransport(kc)).toBe(kc);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    watcher = watchConnections(lab.server.port);
    for (let i = 0; i < 10; i++) {
      await before.readNamespace({ name: 'default' });
      await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    }
    // One, or two: undici's pool may open a second when a request is sent in the same tick as the previous response
    // ends (that connection does not count as free yet); from then on the two take turns.
    expect(watcher.sockets.length).toBeLessThanOrEqual(2);
    expect(watcher.sockets.filter((s) => s.destroyed)).toEqual([]);
    // Requests at once get connections of their own (pipelining 1), which later requests reuse.
    await Promise.all([1, 2, 3, 4].map(() => before.readNamespace({ name: 'default' })));
    const atOnce = watcher.sockets.length;
    expect(atOnce).toBeGreaterThan(2);
    await Promise.all([1, 2, 3, 4].map(() => before.readNamespace({ name: 'default' })));
    expect(watcher.sockets).toHaveLength(atOnce);
  });

  it('a renewed token file (kube/token-file.ts) is sent with the next request, over the same connections', async () => {
    const tokenFile = lab.file('sa-token', lab.server.issuePrivilegedToken('alice'));
    const kc = await kubeConfig();
    const ctx = kc.getContextObject(kc.getCurrentContext())!;
    kc.loadFromOptions({
      clusters: kc.getClusters(),
      users: [{ name: ctx.user, authProvider: { name: 'tokenFile', config: { tokenFile } } }],
      contexts: kc.getContexts(),
      currentContext: kc.getCurrentContext(),
    });
    expect(reloadTokenFileOnChange(kc)).toBe(true);
    withTransport(kc);
    const authn = kc.makeApiClient(AuthenticationV1Api);
    const whoami = async () =>
      (
        await authn.createSelfSubjectReview({
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        })
      ).status?.userInfo?.username;
    watcher = watchConnections(lab.server.port);
    for (let i = 0; i < 3; i++) expect(await whoami()).toBe('alice');
    const open = watcher.sockets.length;
    // The kubelet's atomic writer: a new file renamed over the old name.
    writeFileSync(`${tokenFile}.new`, lab.server.issuePrivilegedToken('bob'));
    renameSync(`${tokenFile}.new`, tokenFile);
    for (let i = 0; i < 3; i++) expect(await whoami()).toBe('bob');
    expect(watcher.sockets).toHaveLength(open);
  });

  it('a renewed CA file gets new connections, and the old ones are closed', async () => {
    const caFile = lab.file('ca.crt', lab.server.caPem);
    const kc = await kubeConfig();
    kc.loadFromOptions({
      clusters: kc.getClusters().map((c) => ({ ...c, caData: undefined, caFile })),
      users: kc.getUsers(),
      contexts: kc.getContexts(),
      currentContext: kc.getCurrentContext(),
    });
    withTransport(kc);
    const core = kc.makeApiClient(CoreV1Api);
    watcher = watchConnections(lab.server.port);
    for (let i = 0; i < 3; i++) await core.readNamespace({ name: 'default' });
    const old = [...watcher.sockets];
    writeFileSync(caFile, `${lab.server.caPem}\n`);
    for (let i = 0; i < 3; i++) await core.readNamespace({ name: 'default' });
    const renewed = watcher.sockets.slice(old.length);
    expect(renewed.length).toBeGreaterThan(0);
    await Promise.all(old.map(closed));
    expect(renewed.filter((s) => s.destroyed)).toEqual([]);
  });

  it('closeTransport ends them; a later request opens a new one', async () => {
    const kc = withTransport(await kubeConfig());
    const core = kc.makeApiClient(CoreV1Api);
    watcher = watchConnections(lab.server.port);
    await core.readNamespace({ name: 'default' });
    await closeTransport(kc);
    await closed(watcher.sockets[0]!);
    await core.readNamespace({ name: 'default' });
    expect(watcher.sockets).toHaveLength(2);
  });

  it('a kept-alive connection does not keep a process alive (undici unrefs idle sockets)', async () => {
    // The server keeps idle connections for 120 s: a process held open by one would outlive this test's timeout.
    const mod = pathToFileURL(join(import.meta.dirname, '../../system/controlplane/kube/transport.ts')).href;
    const script = `
      import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
      import { withTransport } from ${JSON.stringify(mod)};
      const kc = new KubeConfig();
      kc.loadFromFile(${JSON.stringify(lab.server.kubeconfigPath)});
      const ns = await withTransport(kc).makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
      console.log(ns.metadata.name);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(0);
    expect(out.trim()).toBe('default');
  });
});

describe("the HTTP layer of API clients (kube/transport.ts): request() with fetch()'s behaviour", () => {
  let server: http.Server;
  const seen: IncomingHttpHeaders[] = [];
  const NS = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' }, status: { phase: 'Active' } };
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/api/v1/namespaces/default') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify(NS)));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** A kubeconfig for plain HTTP on `port` (client-node wants skipTLSVerify for http:). */
  function kubeConfig(port: number): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't0k3n' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  it('sends what fetch sent but its sec-fetch-mode, and decodes a gzip body', async () => {
    const kc = kubeConfig((server.address() as AddressInfo).port);
    seen.length = 0;
    const ns = await kc.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
    const viaFetch = seen.pop()!;
    const pooled = withTransport(kc);
    try {
      const again = await pooled.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
      expect(again).toEqual(ns);
      expect(again.status?.phase).toBe('Active');
      const viaRequest = seen.pop()!;
      expect(viaFetch['sec-fetch-mode']).toBe('cors');
      expect(viaRequest['sec-fetch-mode']).toBeUndefined();
      for (const h of ['authorization', 'user-agent', 'accept']) expect(viaRequest[h], h).toBe(viaFetch[h]);
      expect(viaRequest['accept-encoding']).toBe('gzip, deflate');
      expect(viaRequest.authorization).toBe('Bearer t0k3n');
      // A refusal is the library's ApiException, as before.
      const err = await pooled
        .makeApiClient(CoreV1Api)
        .readNamespace({ name: 'nope' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiException);
      expect((err as ApiException<unknown>).code).toBe(404);
    } finally {
      await closeTransport(kc);
    }
  });

  it("a server that is not there fails as fetch did: TypeError('fetch failed') with the cause", async () => {
    const gone = http.createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((r) => gone.close(() => r()));
    const kc = withTransport(kubeConfig(port));
    const err = (await kc
      .makeApiClient(CoreV1Api)
      .readNamespace({ name: 'default' })
      .catch((e: unknown) => e)) as Error & { cause?: { code?: string } };
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('fetch failed');
    expect(err.cause?.code).toBe('ECONNREFUSED');
    await closeTransport(kc);
  });
});
