// Issue 12 item 2 end to end on the lab: TLS passthrough. A Gateway with a TLS listener in mode Passthrough and two
// TLSRoutes routing by SNI to two backends that serve TLS themselves (the echo's HTTPS port, each with its own
// certificate from a Secret volume, signed by a CA of the scenario's own). Through the Gateway's LoadBalancer address
// the client sees the backend's certificate (the proxy never terminates), each SNI reaches its backend, a name no
// route has is closed; the statuses (Accepted, ResolvedRefs, the listener's supportedKinds TLSRoute and
// attachedRoutes), the proxy's config_dump (tls_inspector, one filter chain per route with server_names, tcp_proxy),
// `/listeners`, the tls_inspector.* and no_filter_chain_match stats, and, with the `filter`, `connection` and
// `conn_handler` loggers at debug through /logging as the contract's procedure does, the tls_inspector's and the
// connection handler's lines in Envoy's format. Beside it, a TLS listener in mode Terminate (the gateway's own
// certificate from a Secret, then plaintext to the echo's HTTP port): the client sees the gateway's certificate, and
// the `[connection]` lines of Envoy's SSL socket show the handshake; `explain tlsroute/<name>` finds each route in
// the proxy's config. Sources: GEP-2643 and TLSRoute v1 (Gateway API v1.6.1), Envoy's
// tls_inspector.cc and active_stream_listener_base.cc.
import https from 'node:https';
import type tls from 'node:tls';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caCert, rsaCert, tlsSecret } from '../conformance/utils/certificates.ts';
import { type AdminSession, configDump, openProxyAdmin, setLogLevel } from '../lab/toolkit/admin.ts';
import { markLogs } from '../lab/toolkit/logs.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s18-tls');
const PORT = 9443;
const hostA = 'a.s18.example.com';
const hostB = 'b.s18.example.com';
const TERM_PORT = 9444;
const hostT = 't.s18.example.com';
artifactNamespaces(ns);

const ca = caCert();
const caPem = forge.pki.certificateToPem(ca.cert);

function backend(name: string): string {
  return `
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {app: ${name}}
  ports:
  - {name: https, port: 443, targetPort: 8443, protocol: TCP}
  - {name: http, port: 80, targetPort: 3000, protocol: TCP}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: echo
        image: gwlab.local/system:0.1.0
        args: [echo]
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        - {name: TLS_SERVER_CERT, value: /etc/tls/tls.crt}
        - {name: TLS_SERVER_PRIVKEY, value: /etc/tls/tls.key}
        volumeMounts: [{name: tls, mountPath: /etc/tls}]
        readinessProbe: {tcpSocket: {port: 8443}, periodSeconds: 1}
      volumes: [{name: tls, secret: {secretName: ${name}-cert}}]
`;
}

const resources = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners:
  - name: tls
    protocol: TLS
    port: ${PORT}
    hostname: "*.s18.example.com"
    tls: {mode: Passthrough}
  - name: terminate
    protocol: TLS
    port: ${TERM_PORT}
    hostname: ${hostT}
    tls: {mode: Terminate, certificateRefs: [{name: gateway-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: t, namespace: ${ns}}
spec:
  parentRefs: [{name: gw, sectionName: terminate}]
  hostnames: [${hostT}]
  rules: [{backendRefs: [{name: backend-a, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: a, namespace: ${ns}}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [${hostA}]
  rules: [{backendRefs: [{name: backend-a, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: b, namespace: ${ns}}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [${hostB}]
  rules: [{backendRefs: [{name: backend-b, port: 443}]}]
---
${backend('backend-a')}
---
${backend('backend-b')}`;

interface Reply {
  /** The certificate the client was served: its SAN DNS names. */
  san: string;
  status: number;
  pod: string;
}

/** An HTTPS request through the Gateway with that SNI, verifying the certificate against the scenario's CA. */
function httpsGet(lb: { address: string; port: number }, servername: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: lb.address,
        port: lb.port,
        servername,
        ca: caPem,
        path: '/',
        headers: { host: servername },
        agent: false,
      },
      (res) => {
        const san = String((res.socket as tls.TLSSocket).getPeerCertificate().subjectaltname ?? '');
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ san, status: res.statusCode ?? 0, pod: JSON.parse(body).pod ?? '' }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/[.[\]]/g, '\\$&')}: (\\d+)$`, 'm'))?.[1]);

describe('TLS passthrough: TLSRoutes by SNI to backends that serve TLS', () => {
  let admin: AdminSession | undefined;
  let lb: { address: string; port: number };

  beforeAll(async () => {
    await lab.kube.apply(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}`);
    await lab.kube.apply([
      tlsSecret(ns, 'backend-a-cert', rsaCert([hostA], 'server', ca)),
      tlsSecret(ns, 'backend-b-cert', rsaCert([hostB], 'server', ca)),
      tlsSecret(ns, 'gateway-cert', rsaCert([hostT], 'server', ca)),
    ]);
    await lab.kube.apply(resources);
    await lab.kube.waitForRollout('backend-a', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('backend-b', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    lb = await gatewayAddress(lab.kube, ns, 'gw', PORT);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('statuses: both TLSRoutes accepted with resolved refs; the listener carries TLSRoute, 2 routes attached', async () => {
    for (const name of ['a', 'b', 't']) {
      const r = await lab.kube.waitForCondition(GW_API, 'TLSRoute', name, ns, 'ResolvedRefs');
      expect(r.status.parents[0].conditions.find((c: { type: string }) => c.type === 'Accepted')?.status).toBe('True');
    }
    const gw = await lab.kube.get(GW_API, 'Gateway', 'gw', ns);
    const kinds = [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute' }];
    expect(gw?.status.listeners).toMatchObject([
      { name: 'tls', attachedRoutes: 2, supportedKinds: kinds },
      { name: 'terminate', attachedRoutes: 1, supportedKinds: kinds },
    ]);
  });

  it("SNI routing: each name reaches its backend, and the client sees that backend's own certificate", async () => {
    const a = await waitFor(`an HTTPS answer from backend-a for ${hostA}`, async () => {
      const r = await httpsGet(lb, hostA).catch((e: Error) => e.message);
      return { ok: typeof r === 'object' && r.pod.startsWith('backend-a-'), value: r as Reply, seen: r };
    });
    expect(a).toMatchObject({ san: `DNS:${hostA}`, status: 200 });
    const b = await httpsGet(lb, hostB);
    expect(b).toMatchObject({ san: `DNS:${hostB}`, status: 200 });
    expect(b.pod).toMatch(/^backend-b-/);
  });

  it("config_dump and /listeners show the listener's SNI filter chains: tls_inspector, server_names, tcp_proxy", async () => {
    const dump = await configDump(admin!);
    const l = dump.configs
      .filter((c) => String(c['@type']).endsWith('ListenersConfigDump'))
      .flatMap((c) => (c.dynamic_listeners ?? []).map((x: any) => x.active_state?.listener))
      .find((x: any) => x?.name === `listener~${PORT}`);
    expect(l.listener_filters.map((f: { name: string }) => f.name)).toEqual(['envoy.filters.listener.tls_inspector']);
    expect(
      l.filter_chains.map((c: any) => [c.filter_chain_match.server_names, c.filters[0].typed_config.cluster]),
    ).toEqual([
      [[hostA], `kube_${ns}_backend-a_443`],
      [[hostB], `kube_${ns}_backend-b_443`],
    ]);
    expect(l.filter_chains.every((c: any) => !c.transport_socket)).toBe(true);
    expect((await admin!.get('/listeners')).text).toContain(`listener~${PORT}::0.0.0.0:${PORT}`);
  });

  it('debug logs (loggers set through /logging) show the ClientHello read and a closed connection no chain matches', async () => {
    await setLogLevel(admin!, { filter: 'debug', connection: 'debug', conn_handler: 'debug' });
    const mark = await markLogs(lab.kube, { namespace: ns, pod: admin!.pod });
    const before = (await admin!.get('/stats')).text;
    await httpsGet(lb, hostA);
    await expect(httpsGet(lb, 'other.s18.example.com')).rejects.toThrow();
    const lines = await mark.waitFor(
      'the tls_inspector and connection handler debug lines',
      (ls) =>
        ls.some((l) => l.includes(`tls:onServerName(), requestedServerName: ${hostA}`)) &&
        ls.some((l) => l.includes('no matching filter chain found')),
    );
    expect(lines.find((l) => l.includes('requestedServerName'))).toMatch(
      /^\[[\d-]+ [\d:.]+\]\[\d+\]\[debug\]\[filter\] \[\S+:\d+\] tls:onServerName\(\), requestedServerName: a\.s18\.example\.com$/,
    );
    expect(lines.find((l) => l.includes('no matching filter chain found'))).toMatch(
      /\[debug\]\[conn_handler\] .*closing connection from [\d.]+:\d+: no matching filter chain found$/,
    );
    const after = (await admin!.get('/stats')).text;
    expect(stat(after, 'tls_inspector.sni_found')).toBeGreaterThanOrEqual(
      (stat(before, 'tls_inspector.sni_found') || 0) + 2,
    );
    const prefix = `listener.0.0.0.0_${PORT}`;
    expect(stat(after, `${prefix}.no_filter_chain_match`)).toBe(
      (stat(before, `${prefix}.no_filter_chain_match`) || 0) + 1,
    );
    await setLogLevel(admin!, 'info');
  });

  it('Terminate: the gateway ends TLS with its own certificate, plaintext to the echo; [connection] handshake lines', async () => {
    const lbT = await gatewayAddress(lab.kube, ns, 'gw', TERM_PORT);
    const mark = await markLogs(lab.kube, { namespace: ns, pod: admin!.pod });
    await setLogLevel(admin!, { connection: 'debug' });
    const r = await waitFor(`an answer through the terminating listener for ${hostT}`, async () => {
      const x = await httpsGet(lbT, hostT).catch((e: Error) => e.message);
      return { ok: typeof x === 'object' && x.pod.startsWith('backend-a-'), value: x as Reply, seen: x };
    });
    expect(r).toMatchObject({ san: `DNS:${hostT}`, status: 200 });
    const lines = await mark.waitFor('the SSL socket debug lines', (ls) =>
      ls.some((l) => l.endsWith('handshake complete')),
    );
    expect(lines.find((l) => l.endsWith('handshake complete'))).toMatch(
      /^\[[\d-]+ [\d:.]+\]\[\d+\]\[debug\]\[connection\] \[\S+:\d+\] \[Tags: "ConnectionId":"\d+"\] handshake complete$/,
    );
    const stats = (await admin!.get('/stats')).text;
    expect(stat(stats, `listener.0.0.0.0_${TERM_PORT}.ssl.handshake`)).toBeGreaterThanOrEqual(1);
    await setLogLevel(admin!, 'info');
  });

  it('explain: each TLSRoute accepted, resolved and held by the proxy in one of its SNI chains (exit 0)', async () => {
    for (const target of ['tlsroute/a', 'tlsroute/b', 'tlsroute/t']) {
      const { code, report, run } = await explainJson(lab, target, ns);
      expect(code, run.stdout).toBe(0);
      expect(report.findings.map((f: { message: string }) => f.message)).toEqual(
        expect.arrayContaining([
          `accepted by Gateway ${ns}/gw`,
          'backends resolved',
          expect.stringMatching(/^in the proxy config of Gateway .*: a tcp_proxy listener to its backends/),
        ]),
      );
    }
  });
});
