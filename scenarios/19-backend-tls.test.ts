// Issue 12 item 3, "BackendTLSPolicy with a wrong CA", as a user meets it on the lab: the sample application serves
// HTTPS (`sampleapp --tls`, its certificate from a kubernetes.io/tls Secret volume at /etc/tls) behind Service app
// port 443 (name https); an HTTPRoute sends to it through a Gateway; a BackendTLSPolicy (Gateway API v1.6.1 v1,
// GEP-1897) on that port with hostname app.s19.internal. Step by step: a caCertificateRef to a ConfigMap that does not
// exist (Accepted=False/NoValidCACertificate, ResolvedRefs=False/InvalidCACertificateRef, requests 5xx); a ConfigMap
// with another CA (Accepted, but the proxy's verification fails: 503 with Envoy's body "... reset reason: connection
// failure, transport failure reason: TLS_error:|268435581:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED:
// TLS_error_end", counted in the cluster's ssl.fail_verify_error and upstream_cx_connect_fail, the [connection] and
// [http] debug lines naming it); the right CA's ConfigMap → 200 from the backend over TLS. config_dump shows the
// cluster's transport socket (UpstreamTlsContext: sni, trusted_ca inline, match_typed_subject_alt_names).
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caCert, rsaCert } from '../conformance/utils/certificates.ts';
import { type AdminSession, configDump, openProxyAdmin, setLogLevel } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayUrl } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s19-btls');
const host = 'app.s19.example.com';
const backendName = 'app.s19.internal';
const cluster = `kube_${ns}_app_443`;
artifactNamespaces(ns);

const rightCa = caCert();
const wrongCa = caCert();
const serving = rsaCert([backendName], 'server', rightCa);
const pem = (c: typeof rightCa) => forge.pki.certificateToPem(c.cert);
const b64 = (s: string) => Buffer.from(s).toString('base64');

const resources = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: v1
kind: Secret
metadata: {name: app-tls, namespace: ${ns}}
type: kubernetes.io/tls
data: {tls.crt: ${b64(serving.cert)}, tls.key: ${b64(serving.key)}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: wrong-ca, namespace: ${ns}}
data: {ca.crt: ${JSON.stringify(pem(wrongCa))}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: right-ca, namespace: ${ns}}
data: {ca.crt: ${JSON.stringify(pem(rightCa))}}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: ${ns}}
spec:
  selector: {app: app}
  ports: [{name: https, port: 443, targetPort: 8443, protocol: TCP}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: app
        image: gwlab.local/system:0.1.0
        args: [sampleapp, --port, "8443", --tls]
        ports: [{name: https, containerPort: 8443}]
        volumeMounts: [{name: tls, mountPath: /etc/tls, readOnly: true}]
        readinessProbe: {httpGet: {path: /status/200, port: 8443, scheme: HTTPS}, periodSeconds: 1}
      volumes: [{name: tls, secret: {secretName: app-tls}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: app, port: 443}]}]
`;

const policy = (caConfigMap: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: app-tls, namespace: ${ns}}
spec:
  targetRefs: [{group: "", kind: Service, name: app, sectionName: https}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: ${caConfigMap}}]
    hostname: ${backendName}
`;

/** The policy's conditions for Gateway gw, once they carry its latest generation and `want` holds. */
async function policyConditions(want: Record<string, [string, string]>) {
  return waitFor(`BackendTLSPolicy ${ns}/app-tls to have ${JSON.stringify(want)}`, async () => {
    const p = await lab.kube.get(GW_API, 'BackendTLSPolicy', 'app-tls', ns);
    const a = p?.status?.ancestors?.find((x: any) => x.ancestorRef?.name === 'gw');
    const conds: any[] = a?.conditions ?? [];
    const ok =
      conds.every((c) => c.observedGeneration === p?.metadata?.generation) &&
      Object.entries(want).every(([t, [st, r]]) =>
        conds.some((c) => c.type === t && c.status === st && c.reason === r),
      );
    return { ok, value: conds, seen: p?.status };
  });
}

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm'))?.[1] ?? Number.NaN);

describe('BackendTLSPolicy with a wrong CA, then fixed (issue 12 item 3)', () => {
  let url: string;
  let admin: AdminSession | undefined;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.apply(policy('missing-ca'));
    await lab.kube.waitForRollout('app', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('a caCertificateRef to a missing ConfigMap: Accepted=False NoValidCACertificate, ResolvedRefs=False, requests 5xx', async () => {
    const conds = await policyConditions({
      Accepted: ['False', 'NoValidCACertificate'],
      ResolvedRefs: ['False', 'InvalidCACertificateRef'],
    });
    expect(conds.find((c) => c.type === 'ResolvedRefs').message).toContain(`ConfigMap ${ns}/missing-ca not found`);
    const r = await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'web', ns, 'ResolvedRefs');
    expect(r.status.parents[0].conditions.find((c: any) => c.type === 'Accepted')?.status).toBe('True');
    await expectHttpEventually({ url, path: '/headers', host }, { status: 503 });
  });

  it('a ConfigMap with another CA: the policy is accepted, the proxy answers 503 with the TLS verification error', async () => {
    await lab.kube.apply(policy('wrong-ca'));
    await policyConditions({ Accepted: ['True', 'Accepted'], ResolvedRefs: ['True', 'ResolvedRefs'] });
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    await setLogLevel(admin, { connection: 'debug', http: 'debug' });
    const res = await expectHttpEventually(
      { url, path: '/headers', host },
      {
        status: 503,
        body: 'upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: TLS_error:|268435581:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED:TLS_error_end',
      },
    );
    expect(res.headers.server).toBe('envoy');
    const stats = (await admin.get('/stats')).text;
    expect(stat(stats, `cluster.${cluster}.ssl.fail_verify_error`)).toBeGreaterThanOrEqual(1);
    expect(stat(stats, `cluster.${cluster}.upstream_cx_connect_fail`)).toBeGreaterThanOrEqual(1);
    const logs = await waitFor('the proxy debug lines of the TLS failure', async () => {
      const pod = admin!.pod;
      const text = await lab.k(['logs', '-n', ns, pod, '--tail=400']);
      const ok = /\[debug\]\[connection\].*remote address:.*TLS_error:\|268435581:.*CERTIFICATE_VERIFY_FAILED/.test(
        text,
      );
      return { ok, value: text, seen: text.slice(-2000) };
    });
    expect(logs).toMatch(/\[debug\]\[connection\].*verify cert failed: X509_verify_cert/);
    expect(logs).toMatch(/\[debug\]\[http\].*Sending local reply with details upstream_reset_before_response_started/);
  });

  it("config_dump shows the cluster's transport socket: UpstreamTlsContext with the policy's hostname and CA", async () => {
    admin ??= await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const dump = await configDump(admin);
    const clusters: any[] = dump.configs
      .filter((c) => String(c['@type']).endsWith('ClustersConfigDump'))
      .flatMap((c) => (c.dynamic_active_clusters ?? []).map((x: any) => x.cluster));
    const c = clusters.find((x) => x.name === cluster);
    expect(c.transport_socket).toMatchObject({
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
        sni: backendName,
        common_tls_context: {
          validation_context: {
            match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: backendName } }],
          },
        },
      },
    });
    // The ConfigMap's CA, inline (PEM line endings aside: the generator writes CRLF, the control plane keeps LF).
    const lf = (x: string) => x.replace(/\r\n/g, '\n').trim();
    expect(lf(c.transport_socket.typed_config.common_tls_context.validation_context.trusted_ca.inline_string)).toBe(
      lf(pem(wrongCa)),
    );
  });

  it('the ConfigMap with the right CA: 200 from the backend over TLS', async () => {
    await lab.kube.apply(policy('right-ca'));
    await policyConditions({ Accepted: ['True', 'Accepted'], ResolvedRefs: ['True', 'ResolvedRefs'] });
    const res = await expectHttpEventually({ url, path: '/get', host }, { status: 200 }, { timeoutMs: 60_000 });
    expect(res.json.headers.Host).toEqual([host]);
    admin ??= await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const stats = (await admin.get('/stats')).text;
    expect(stat(stats, `cluster.${cluster}.ssl.handshake`)).toBeGreaterThanOrEqual(1);
  });
});
