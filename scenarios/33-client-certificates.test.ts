// Issue 19 (GEP-91, Gateway API v1.6.1 spec.tls.frontend) as a team meets it rolling out mutual TLS on its HTTPS
// Gateway: first the validation names the CA ConfigMap wrongly (a typo): the HTTPS listener reads ResolvedRefs
// False/InvalidCACertificateRef and Accepted False/NoValidCACertificate, naming the ConfigMap, and is not served. The
// name fixed, with mode AllowInsecureFallback (the rollout step: clients without a certificate keep working) the
// Gateway carries InsecureFrontendValidationMode=True and a client without certificate is served. Then AllowValidOnly:
// the condition goes, a client without certificate fails its handshake, counted in the proxy's
// listener ssl.fail_verify_no_cert (Envoy's stat), one whose certificate another CA signed is refused
// (ssl.fail_verify_error), and one signed by the CA gets 200 from the backend.
// Certificates: conformance/utils/certificates.ts (the project's one generator, as upstream's certificate.go).
import https from 'node:https';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { caCert, caConfigMap, rsaCert, tlsSecret } from '../conformance/utils/certificates.ts';
import { type AdminSession, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s33-mtls');
const PORT = 9444;
const host = 'api.s33.example.com';
artifactNamespaces(ns);

const serverCa = caCert();
const clientCa = caCert();
const strangerCa = caCert();
const serverCaPem = forge.pki.certificateToPem(serverCa.cert);
const server = rsaCert([host], 'server', serverCa);
const client = rsaCert([], 'client', clientCa);
const stranger = rsaCert([], 'client', strangerCa);

const gateway = (caName: string, mode: 'AllowValidOnly' | 'AllowInsecureFallback') => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  tls:
    frontend:
      default:
        validation: {mode: ${mode}, caCertificateRefs: [{group: "", kind: ConfigMap, name: ${caName}}]}
  listeners:
  - {name: https, protocol: HTTPS, port: ${PORT}, hostname: ${host}, tls: {certificateRefs: [{name: server}]}}
`;

const resources = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
${stringify(tlsSecret(ns, 'server', server))}---
${stringify(caConfigMap(ns, 'client-ca', clientCa))}---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: ${ns}}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 8080, targetPort: 3000, protocol: TCP}]
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
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{name: http, containerPort: 3000, protocol: TCP}]
        readinessProbe: {httpGet: {path: /health, port: 3000}, periodSeconds: 1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: echo, port: 8080}]}]
---
${gateway('clientca', 'AllowValidOnly')}`;

async function lbAddress(): Promise<{ address: string; port: number }> {
  return waitFor(`the load balancer address of Service ${ns}/gw`, async () => {
    const svc = await lab.kube.get('v1', 'Service', 'gw', ns);
    const ing = svc?.status?.loadBalancer?.ingress?.[0];
    const address = ing?.ip ?? ing?.hostname;
    const served = Number(svc?.metadata?.annotations?.[`gwlab.dev/lb-port-${PORT}`] ?? PORT);
    return { ok: !!address, value: { address, port: served }, seen: svc?.status };
  });
}

/**
 * `curl --resolve <host>:<port>:<address> --cacert ca.crt [--cert c.crt --key c.key] https://<host>:<port>/`: the
 * status, or the error the client saw (a failed handshake, a closed connection).
 */
function get(lb: { address: string; port: number }, pem?: { cert: string; key: string }): Promise<number | string> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: lb.address,
        port: lb.port,
        path: '/s33',
        servername: host,
        headers: { host },
        ca: serverCaPem,
        ...(pem ? { cert: pem.cert, key: pem.key } : {}),
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

const listenerConditions = async () => {
  const gw = await lab.kube.get(GW_API, 'Gateway', 'gw', ns);
  const l = (gw?.status?.listeners ?? []).find((x: { name: string }) => x.name === 'https');
  return Object.fromEntries((l?.conditions ?? []).map((c: any) => [c.type, c]));
};
const gatewayCondition = async (type: string) =>
  ((await lab.kube.get(GW_API, 'Gateway', 'gw', ns))?.status?.conditions ?? []).find((c: any) => c.type === type);

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm'))?.[1] ?? 0);

describe('mutual TLS on an HTTPS Gateway (spec.tls.frontend): a wrong CA name, the insecure fallback, then required', () => {
  let lb: { address: string; port: number };
  let admin: AdminSession | undefined;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForRollout('echo', ns, { timeoutMs: 90_000 });
  }, 240_000);

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('a CA ConfigMap name with a typo: the listener says which reference and is not served', async () => {
    const c = await waitFor('listener https Accepted=False', async () => {
      const conds = await listenerConditions();
      return { ok: conds.Accepted?.status === 'False', value: conds, seen: conds };
    });
    expect(c.Accepted.reason).toBe('NoValidCACertificate');
    expect(c.ResolvedRefs).toMatchObject({ status: 'False', reason: 'InvalidCACertificateRef' });
    expect(c.ResolvedRefs.message).toBe(
      `spec.tls.frontend.default.validation.caCertificateRefs[0]: ConfigMap ${ns}/clientca does not exist`,
    );
    expect(c.Programmed.status).toBe('False');
  });

  it('the name fixed, AllowInsecureFallback: the Gateway says so, and a client without certificate is served', {
    timeout: 240_000,
  }, async () => {
    await lab.kube.apply(gateway('client-ca', 'AllowInsecureFallback'));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    lb = await lbAddress();
    const insecure = await waitFor('Gateway InsecureFrontendValidationMode=True', async () => {
      const g = await gatewayCondition('InsecureFrontendValidationMode');
      return { ok: g?.status === 'True', value: g, seen: g };
    });
    expect(insecure.reason).toBe('ConfigurationChanged');
    expect((await listenerConditions()).Accepted.status).toBe('True');
    await waitFor('HTTPS 200 without a client certificate', async () => {
      const r = await get(lb);
      return { ok: r === 200, value: r, seen: r };
    });
    expect(await get(lb, stranger)).toBe(200);
  });

  it('AllowValidOnly: no certificate fails the handshake (ssl.fail_verify_no_cert), another CA is refused, the CA-signed one gets 200', async () => {
    await lab.kube.apply(gateway('client-ca', 'AllowValidOnly'));
    await waitFor('InsecureFrontendValidationMode removed', async () => {
      const g = await gatewayCondition('InsecureFrontendValidationMode');
      return { ok: !g, value: g, seen: g };
    });
    await waitFor('a client without certificate refused', async () => {
      const r = await get(lb);
      return { ok: r !== 200, value: r, seen: r };
    });
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const prefix = `listener.0.0.0.0_${PORT}.ssl`;
    const before = (await admin.get('/stats')).text;
    expect(await get(lb)).not.toBe(200);
    expect(await get(lb, stranger)).not.toBe(200);
    expect(await get(lb, client)).toBe(200);
    const after = await waitFor('the ssl stats counted', async () => {
      const text = (await admin!.get('/stats')).text;
      const ok =
        stat(text, `${prefix}.fail_verify_no_cert`) >= stat(before, `${prefix}.fail_verify_no_cert`) + 1 &&
        stat(text, `${prefix}.fail_verify_error`) >= stat(before, `${prefix}.fail_verify_error`) + 1;
      return { ok, value: text, seen: text.split('\n').filter((l) => l.startsWith(prefix)) };
    });
    expect(stat(after, `${prefix}.handshake`)).toBeGreaterThan(stat(before, `${prefix}.handshake`));
  });
});
