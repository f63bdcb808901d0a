// Issue 13 item 4, buffer and compression. An upload route gets a TrafficPolicy `buffer` (maxRequestBytes 1024): a
// larger upload is answered by the proxy itself, 413 `Payload Too Large` (Envoy's request_payload_too_large), and
// counted in downstream_rq_too_large; a small one reaches the backend whole; the other routes take any size. The
// Gateway gets `compression` — with the bug users report: contentTypes [text/html] on an API that serves JSON, so
// nothing is compressed although the client accepts gzip. Fixed with application/json: responses come with
// content-encoding gzip and vary: Accept-Encoding, the compressor's stats count them. `translate` of the same
// manifests, offline, produces the buffer and compressor config the proxy's config_dump holds.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { runTool } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s31-body');
const host = 's31.example.com';
artifactNamespaces(ns);

const route = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules:
    - {name: upload, matches: [{path: {value: /anything/upload}}], backendRefs: [{name: sampleapp, port: 8000}]}
    - {name: api, backendRefs: [{name: sampleapp, port: 8000}]}
`;
const uploadLimit = `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: upload-limit, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, sectionName: upload}]
  buffer: {maxRequestBytes: 1024}
`;
const gzip = (types: string[]) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: gzip, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  compression: {minContentLength: 100, contentTypes: [${types.join(', ')}]}
`;

describe('buffer 413 and gzip compression', () => {
  let admin: AdminSession;
  let url: string;
  const req = (path: string, o: { method?: string; body?: string; headers?: Record<string, string> } = {}) => ({
    url,
    path,
    host,
    ...o,
  });

  beforeAll(async () => {
    await lab.kube.apply(namespaceWithGateway(ns) + '---' + route);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(uploadLimit);
    await lab.kube.apply(gzip(['text/html']));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('an upload over maxRequestBytes: 413 Payload Too Large from the proxy; under it, the backend gets it whole', async () => {
    const post = (n: number) => req('/anything/upload', { method: 'POST', body: 'x'.repeat(n) });
    await expectHttpEventually(post(2048), { status: 413, body: 'Payload Too Large' });
    const ok = await expectHttpEventually(post(512), { status: 200 });
    expect(ok.json.data).toBe('x'.repeat(512));
    // Only the upload rule is limited.
    await expectHttpEventually(req('/anything/other', { method: 'POST', body: 'x'.repeat(4096) }), { status: 200 });
    const stats = await admin.get('/stats?filter=downstream_rq_too_large');
    expect(stats.text).toMatch(/downstream_rq_too_large: [1-9]/);
  });

  it('compression for text/html only: JSON is not compressed although the client accepts gzip', async () => {
    const json = await expectHttpEventually(req('/stream/20', { headers: { 'accept-encoding': 'gzip' } }), {
      status: 200,
      headers: { 'content-encoding': null },
    });
    expect(json.body.split('\n').filter(Boolean)).toHaveLength(20);
  });

  it('fixed with application/json: gzip, vary: Accept-Encoding, counted; a client without Accept-Encoding gets identity', async () => {
    await lab.kube.apply(gzip(['text/html', 'application/json']));
    await expectHttpEventually(req('/stream/20', { headers: { 'accept-encoding': 'gzip, deflate' } }), {
      status: 200,
      headers: { 'content-encoding': 'gzip', vary: 'Accept-Encoding', 'content-length': null },
    });
    await expectHttpEventually(req('/stream/20'), { status: 200, headers: { 'content-encoding': null } });
    const stats = await admin.get('/stats?filter=compressor');
    expect(stats.text).toMatch(/compressor\.gzip\.gzip\.compressed: [1-9]/);
  });

  it('translate of the same manifests gives the buffer and compressor config the proxy holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwlab-s31-'));
    try {
      const file = join(dir, 'all.yaml');
      writeFileSync(
        file,
        [namespaceWithGateway(ns), route, uploadLimit, gzip(['text/html', 'application/json'])].join('---'),
      );
      const out = await runTool(null, 'translate', ['-f', file, '-o', 'json', '--only', 'xds']);
      expect(out.code, out.stderr).toBe(0);
      const xds = JSON.parse(out.stdout).xds ?? JSON.parse(out.stdout);
      const role = Object.keys(xds)[0]!;
      const live = findRoutes(await configDump(admin), { host, path: '/anything/upload' })[0]!.route;
      const offline = (xds[role].routes as any[])
        .flatMap((rc) => rc.virtual_hosts)
        .flatMap((v: any) => v.routes)
        .find((r: any) => r.name === live.name);
      expect(offline.typed_per_filter_config).toEqual(live.typed_per_filter_config);
      expect(Object.keys(live.typed_per_filter_config).sort()).toEqual([
        'envoy.filters.http.buffer',
        `envoy.filters.http.compressor/${ns}/gzip`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
