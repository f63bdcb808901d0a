// Issue 12 items 1 and 6 as a new user meets them on the lab: an HTTPS Gateway with two listeners on one port, each
// with its own certificate (signed by one CA) picked by SNI, reached through the load balancer address with node:https
// (`servername` and the CA: what `curl --resolve <host>:<port>:<address> --cacert ca.crt` does; a fresh machine has
// no curl). Then a third listener whose certificateRef names a Secret in another namespace: its ResolvedRefs is False
// (RefNotPermitted), lab:status flags it as an unresolved certificate naming the explain command, explain prints the
// missing ReferenceGrant as YAML, the test applies exactly that YAML, and the listener becomes Programmed and serves
// its certificate; lab:status stops flagging it. Last, lab:bundle holds the proxy's /certs with the three chains.
// A WebSocket over TLS (wss) through the HTTPS listener is echoed too (issue 12 item 5 on a TLS listener), and a request
// whose Host names the other listener on a connection SNI gave to the first is answered 421 (issue 19, GEP-3567).
// Certificates: conformance/utils/certificates.ts (the project's one generator, as upstream's certificate.go).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { extract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import { caCert, rsaCert, tlsSecret } from '../conformance/utils/certificates.ts';
import { GATEWAY_NAME_LABEL } from '../lab/toolkit/admin.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson, runTool } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s21-https');
const certsNs = uniqueName('s21-certs');
const PORT = 9443;
const hostA = 'a.s21.example.com';
const hostB = 'b.s21.example.com';
const hostC = 'c.s21.example.com';
artifactNamespaces(ns, certsNs);

const ca = caCert();
const caPem = forge.pki.certificateToPem(ca.cert);
const pems = {
  a: rsaCert([hostA], 'server', ca),
  b: rsaCert([hostB], 'server', ca),
  c: rsaCert([hostC], 'server', ca),
};

const listener = (name: string, hostname: string, ref: string) =>
  `  - {name: ${name}, protocol: HTTPS, port: ${PORT}, hostname: ${hostname}, tls: {mode: Terminate, certificateRefs: [${ref}]}}`;

const gateway = (withC: boolean) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners:
${listener('https-a', hostA, '{name: a}')}
${listener('https-b', hostB, '{name: b}')}
${withC ? listener('https-c', hostC, `{name: c, namespace: ${certsNs}}`) : ''}
`;

const resources = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ${certsNs}}
---
${stringify(tlsSecret(ns, 'a', pems.a))}---
${stringify(tlsSecret(ns, 'b', pems.b))}---
${stringify(tlsSecret(certsNs, 'c', pems.c))}---
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
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${hostA}, ${hostB}, ${hostC}]
  rules: [{backendRefs: [{name: echo, port: 8080}]}]
---
${gateway(false)}`;

interface HttpsAnswer {
  status: number;
  body: any;
  /** The DNS names of the certificate the server presented. */
  san: string;
}

/** `curl --resolve <host>:<port>:<address> --cacert ca.crt https://<host>:<port>/`: SNI and Host, verified by the CA. */
function getHttps(lb: { address: string; port: number }, host: string, authority = host): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: lb.address,
        port: lb.port,
        path: '/s21',
        servername: host,
        headers: { host: `${authority}:${lb.port}` },
        ca: caPem,
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        const san = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().subjectaltname ?? '';
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        const json = (res.headers['content-type'] ?? '').includes('json');
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text && json ? JSON.parse(text) : text || undefined, san }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function httpsEventually(lb: { address: string; port: number }, host: string): Promise<HttpsAnswer> {
  return waitFor(`HTTPS 200 from ${host} through the Gateway`, async () => {
    const r = await getHttps(lb, host).catch((e: Error) => e.message);
    return { ok: typeof r !== 'string' && r.status === 200, value: r as HttpsAnswer, seen: r };
  });
}

const listenerCondition = async (name: string, type: string) => {
  const gw = await lab.kube.get(GW_API, 'Gateway', 'gw', ns);
  const l = (gw?.status?.listeners ?? []).find((x: { name: string }) => x.name === name);
  return (l?.conditions ?? []).find((c: { type: string }) => c.type === type);
};

/** lab:status -n <ns> -o json: its problems about this Gateway's certificates. */
async function certificateProblems(): Promise<string[]> {
  const r = await runTool(lab, 'lab-status', ['-n', ns, '-o', 'json']);
  const s = JSON.parse(r.stdout) as { problems: string[] };
  return s.problems.filter((p) => p.startsWith('certificate not resolved:') && p.includes(`Gateway ${ns}/gw `));
}

describe('HTTPS listeners: certificates by SNI, a cross-namespace certificate fixed with what explain prints', () => {
  let lb: { address: string; port: number };
  const work = mkdtempSync(join(tmpdir(), 'gwlab-s21-'));

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForRollout('echo', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    lb = await gatewayAddress(lab.kube, ns, 'gw', PORT);
  }, 240_000);

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns, certsNs], () => rmSync(work, { recursive: true, force: true }));
  });

  it('two listeners on one port: each hostname gets its own certificate by SNI, verified by the CA', async () => {
    const a = await httpsEventually(lb, hostA);
    expect(a.san).toBe(`DNS:${hostA}`);
    expect(a.body).toMatchObject({ host: `${hostA}:${lb.port}`, path: '/s21' });
    const b = await httpsEventually(lb, hostB);
    expect(b.san).toBe(`DNS:${hostB}`);
  });

  it("a request for one listener's host on a connection the other listener's certificate answered: 421", async () => {
    await httpsEventually(lb, hostA);
    // SNI chose hostA's listener (and its certificate); the Host names hostB, another listener's: Misdirected Request,
    // as upstream's HTTPRouteHTTPSListenerDetectMisdirectedRequests (GEP-3567) wants, not hostB's routes.
    const r = await getHttps(lb, hostA, hostB);
    expect(r.san).toBe(`DNS:${hostA}`);
    expect(r.status).toBe(421);
    // The same request with its own SNI is served.
    expect((await getHttps(lb, hostB)).status).toBe(200);
  });

  it('a WebSocket over TLS (wss) through the HTTPS listener: the echo answers a frame', async () => {
    // ws hands its options to tls.connect: servername is the SNI (its type omits it).
    const options = {
      servername: hostA,
      ca: caPem,
      headers: { host: `${hostA}:${lb.port}` },
      origin: `https://${hostA}`,
      handshakeTimeout: 10_000,
    } as WebSocket.ClientOptions;
    const ws = new WebSocket(`wss://${lb.address}:${lb.port}/ws`, options);
    try {
      await new Promise((ok, fail) => ws.once('open', ok).once('error', fail));
      const reply = await new Promise<string>((ok) => {
        ws.once('message', (d) => ok(String(d)));
        ws.send('over wss');
      });
      expect(reply).toBe('over wss');
    } finally {
      ws.terminate();
    }
  });

  it('a cross-namespace certificateRef: RefNotPermitted, flagged by lab:status, fixed by the grant explain prints', async () => {
    await lab.kube.apply(gateway(true));
    const refused = await waitFor('listener https-c ResolvedRefs=False', async () => {
      const c = await listenerCondition('https-c', 'ResolvedRefs');
      return { ok: c?.status === 'False', value: c, seen: c };
    });
    expect(refused.reason).toBe('RefNotPermitted');
    expect((await listenerCondition('https-c', 'Programmed'))?.status).toBe('False');
    // The other listeners keep serving.
    expect((await getHttps(lb, hostA)).status).toBe(200);

    const flagged = await certificateProblems();
    expect(flagged).toHaveLength(1);
    expect(flagged[0]).toContain('[listener/https-c] ResolvedRefs=False RefNotPermitted');
    expect(flagged[0]).toContain(`(npm run explain -- gateway/gw/https-c -n ${ns})`);

    const { code, report, run } = await explainJson(lab, 'gateway/gw/https-c', ns);
    expect(code, run.stdout).toBe(1);
    const f = report.findings.find((x: any) => x.level === 'problem' && x.yaml);
    expect(f?.message, JSON.stringify(report.findings)).toContain('certificate not resolved');
    expect(f.message).toContain(`Secret ${certsNs}/c`);
    // The text form prints the same YAML, ready for kubectl apply -f -.
    const text = await runTool(lab, 'explain', ['gateway/gw/https-c', '-n', ns]);
    expect(text.stdout).toContain(f.yaml.trim().split('\n')[0]);

    const applied = await lab.k(['apply', '-f', '-'], f.yaml);
    expect(applied).toMatch(/referencegrant\.gateway\.networking\.k8s\.io\/\S+ created/);
    await waitFor('listener https-c Programmed', async () => {
      const c = await listenerCondition('https-c', 'Programmed');
      return { ok: c?.status === 'True', value: c, seen: c };
    });
    const c = await httpsEventually(lb, hostC);
    expect(c.san).toBe(`DNS:${hostC}`);
    expect(await certificateProblems()).toEqual([]);
    const after = await explainJson(lab, 'gateway/gw/https-c', ns);
    expect(after.report.findings.map((x: any) => x.message)).toContain(
      `listener https-c (HTTPS port ${PORT} ${hostC}): certificates resolved (Secret ${certsNs}/c)`,
    );
  });

  it("lab:bundle holds the proxy's /certs with the three certificates", async () => {
    const archive = join(work, 'bundle.tar.gz');
    const run = await runTool(lab, 'lab-bundle', ['-o', archive], { timeoutMs: 180_000 });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const root = join(work, 'x');
    mkdirSync(root);
    await extract({ file: archive, cwd: root });
    const pods = await lab.kube.list('v1', 'Pod', ns, `${GATEWAY_NAME_LABEL}=gw`);
    const dir = join(root, 'bundle', 'proxies', ns);
    const files = readdirSync(dir).filter((p) => pods.some((x) => x.metadata?.name === p));
    expect(files.length, readdirSync(dir).join(', ')).toBeGreaterThan(0);
    const certs = JSON.parse(readFileSync(join(dir, files[0]!, 'certs.json'), 'utf8'));
    const names = certs.certificates.flatMap((c: any) =>
      c.cert_chain.flatMap((x: any) => (x.subject_alt_names ?? []).map((s: any) => s.dns)),
    );
    expect(names.sort()).toEqual([hostA, hostB, hostC]);
    expect(JSON.stringify(certs)).not.toContain('PRIVATE KEY');
  });
});
