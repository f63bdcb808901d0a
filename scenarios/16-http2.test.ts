// Issue 12 item 4 (HTTP/2) end to end on the lab: a Gateway with an HTTP listener and an HTTPS listener (TLS
// Terminate, a certificate from a kubernetes.io/tls Secret). A client speaks h2c with prior knowledge to the HTTP
// listener and h2 over TLS (ALPN h2, as Envoy Gateway offers `h2,http/1.1`) to the HTTPS one; `/` goes to the sample
// application (HTTP/1.1 upstream), `/h2c` to an echo Service port with `appProtocol: kubernetes.io/h2c` (Gateway API
// GEP-1911), which the proxy reaches over HTTP/2 (the echo reports the protocol it got). HTTP/1.1 keeps working on
// both ports. The proxy's stats (http.<prefix>.downstream_cx_http2_total, downstream_rq_http2_total, the cluster's
// upstream_cx_http2_total) and config_dump (ALPN, http2_protocol_options, the cluster's HttpProtocolOptions) show it.
// An h2 request with an oversized header block is reset as Envoy's HTTP/2 codec resets it (INTERNAL_ERROR,
// http2.header_overflow) and the same connection keeps serving.
import http2 from 'node:http2';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rsaCert, tlsSecret } from '../conformance/utils/certificates.ts';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayUrl, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s16-h2');
const host = 'h2.s16.example.com';
const HTTP_PORT = 9610;
const HTTPS_PORT = 9611;
const pem = rsaCert([host], 'server');
artifactNamespaces(ns);

const resources = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: ${ns}}
spec:
  selector: {app: echo}
  ports:
  - {name: http, port: 8000, targetPort: 3000}
  - {name: h2c, port: 8001, targetPort: 3001, appProtocol: kubernetes.io/h2c}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
      - name: echo
        image: gwlab.local/system:0.1.0
        args: [echo]
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        ports: [{containerPort: 3000}, {containerPort: 3001}]
        readinessProbe: {httpGet: {path: /, port: 3000}, periodSeconds: 1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners:
  - {name: http, protocol: HTTP, port: ${HTTP_PORT}}
  - name: https
    protocol: HTTPS
    port: ${HTTPS_PORT}
    hostname: ${host}
    tls: {mode: Terminate, certificateRefs: [{name: h2-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules:
  - backendRefs: [{name: sampleapp, port: 8000}]
  - matches: [{path: {type: PathPrefix, value: /h2c}}]
    backendRefs: [{name: echo, port: 8001}]
`;

interface H2Result {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  rstCode?: number;
}

/** One request on an HTTP/2 session; a stream reset resolves with its code. */
function h2Get(session: http2.ClientHttp2Session, path: string, extra: http2.OutgoingHttpHeaders = {}) {
  return new Promise<H2Result>((resolve, reject) => {
    const req = session.request({ ':path': path, ':authority': host, ...extra });
    let status = 0;
    let headers: Record<string, unknown> = {};
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (h) => {
      status = Number(h[':status']);
      headers = { ...h };
    });
    req.on('data', (d: string) => (body += d));
    req.on('error', () => {});
    req.on('close', () => resolve({ status, headers, body, ...(req.rstCode ? { rstCode: req.rstCode } : {}) }));
    session.once('error', reject);
  });
}

/** An HTTPS/1.1 request (ALPN http/1.1 only) with SNI and Host `host`, trusting the listener's certificate. */
function https11(base: string, path: string): Promise<{ status: number; alpn: string; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: u.hostname,
        port: u.port,
        path,
        servername: host,
        headers: { host },
        ca: pem.cert,
        ALPNProtocols: ['http/1.1'],
        agent: false,
      } as https.RequestOptions,
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, alpn: String((res.socket as any).alpnProtocol), body }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/[.~]/g, '\\$&')}: (\\d+)$`, 'm'))?.[1] ?? Number.NaN);

describe('HTTP/2 through the Gateway: h2c, h2 over TLS, h2c upstream by appProtocol', () => {
  let admin: AdminSession | undefined;
  let httpBase: string;
  let httpsBase: string;
  const sessions: http2.ClientHttp2Session[] = [];
  const connect = (url: string, opts: http2.SecureClientSessionOptions = {}) => {
    const s = http2.connect(url, opts);
    s.on('error', () => {});
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.apply([tlsSecret(ns, 'h2-cert', pem), ...sampleBackend(ns)]);
    await lab.kube.waitForRollout('echo', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('sampleapp', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    httpBase = await gatewayUrl(lab.kube, ns, 'gw', HTTP_PORT);
    httpsBase = (await gatewayUrl(lab.kube, ns, 'gw', HTTPS_PORT)).replace(/^http:/, 'https:');
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(
      lab,
      suite,
      [ns],
      () => {
        for (const s of sessions) s.destroy();
      },
      () => admin?.close(),
    );
  });

  it('h2c with prior knowledge on the HTTP listener: the sample app over HTTP/1.1, the h2c backend over HTTP/2', async () => {
    const r = await waitFor('an h2c answer from the sample app through the Gateway', async () => {
      const s = connect(httpBase);
      const got = await h2Get(s, '/headers').catch((e: Error) => ({ status: 0, body: e.message }) as H2Result);
      s.close();
      return { ok: got.status === 200, value: got, seen: got };
    });
    expect(r.body.length).toBeGreaterThan(0);
    const s = connect(httpBase);
    const echo = await waitFor('the h2c backend (appProtocol kubernetes.io/h2c) over HTTP/2', async () => {
      const got = await h2Get(s, '/h2c/x');
      return { ok: got.status === 200, value: got, seen: got };
    });
    const captured = JSON.parse(echo.body);
    expect(captured).toMatchObject({ path: '/h2c/x', host, proto: 'HTTP/2.0', namespace: ns });
    expect(captured.headers['X-Forwarded-Proto']).toEqual(['http']);
  });

  it('h2 over TLS by ALPN on the HTTPS listener, and HTTP/1.1 by ALPN on the same port', async () => {
    const s = connect(httpsBase, { servername: host, ca: pem.cert });
    const r = await waitFor('an h2 answer through the HTTPS listener', async () => {
      const got = await h2Get(s, '/h2c/tls');
      return { ok: got.status === 200, value: got, seen: got };
    });
    expect((s.socket as unknown as { alpnProtocol: string }).alpnProtocol).toBe('h2');
    const captured = JSON.parse(r.body);
    expect(captured).toMatchObject({ path: '/h2c/tls', host, proto: 'HTTP/2.0' });
    expect(captured.headers['X-Forwarded-Proto']).toEqual(['https']);
    const h1 = await https11(httpsBase, '/h2c/h1');
    expect(h1).toMatchObject({ status: 200, alpn: 'http/1.1' });
    expect(JSON.parse(h1.body).proto).toBe('HTTP/2.0');
  });

  it('an oversized h2 header block is reset (INTERNAL_ERROR, http2.header_overflow); the connection keeps serving', async () => {
    const s = connect(httpBase);
    const many: http2.OutgoingHttpHeaders = {};
    for (let i = 0; i < 120; i++) many[`x-filler-${i}`] = 'v';
    const r = await h2Get(s, '/h2c/many', many);
    expect(r.rstCode).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR);
    const after = await h2Get(s, '/h2c/after');
    expect(after.status).toBe(200);
  });

  it("the proxy's stats and config_dump show HTTP/2 both ways in Envoy's names and shapes", async () => {
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const stats = (await admin.get('/stats')).text;
    expect(stat(stats, 'http.http.downstream_cx_http2_total')).toBeGreaterThanOrEqual(2);
    expect(stat(stats, 'http.http.downstream_rq_http2_total')).toBeGreaterThanOrEqual(3);
    expect(stat(stats, 'http.https.downstream_cx_http2_total')).toBeGreaterThanOrEqual(1);
    expect(stat(stats, 'http.https.downstream_cx_http1_total')).toBeGreaterThanOrEqual(1);
    expect(stat(stats, `cluster.kube_${ns}_echo_8001.upstream_cx_http2_total`)).toBeGreaterThanOrEqual(1);
    expect(stat(stats, `cluster.kube_${ns}_sampleapp_8000.upstream_cx_http1_total`)).toBeGreaterThanOrEqual(1);
    expect(stat(stats, 'http2.header_overflow')).toBeGreaterThanOrEqual(1);
    const dump = await configDump(admin);
    const clusters: any[] = dump.configs
      .filter((c) => String(c['@type']).endsWith('ClustersConfigDump'))
      .flatMap((c) => (c.dynamic_active_clusters ?? []).map((x: any) => x.cluster));
    const h2c = clusters.find((c) => c.name === `kube_${ns}_echo_8001`);
    expect(
      h2c.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'],
    ).toMatchObject({ explicit_http_config: { http2_protocol_options: { max_concurrent_streams: 100 } } });
    const listeners: any[] = dump.configs
      .filter((c) => String(c['@type']).endsWith('ListenersConfigDump'))
      .flatMap((c) => (c.dynamic_listeners ?? []).map((l: any) => l.active_state?.listener).filter(Boolean));
    const tlsListener = listeners.find((l) => l.name === `listener~${HTTPS_PORT}`);
    const chain = tlsListener.filter_chains[0];
    expect(chain.transport_socket.typed_config.common_tls_context.alpn_protocols).toEqual(['h2', 'http/1.1']);
    expect(chain.filters[0].typed_config.http2_protocol_options).toEqual({
      max_concurrent_streams: 100,
      initial_stream_window_size: 65536,
      initial_connection_window_size: 1048576,
    });
  });
});
