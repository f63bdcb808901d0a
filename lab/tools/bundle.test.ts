// The bundle end to end on an embedded API server (no control plane, no pods): a Secret's value — also copied into a
// ConfigMap and a Gateway annotation — appears nowhere in the archive, in plain or base64 form, and neither does the
// kubeconfig's token. With nothing running, the control plane collector fails and the proxies are skipped: index.md
// says so and the archive is still complete.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract, list } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../embedded/apiserver/testing/test-lab.ts';
import { projectCrds } from '../testing/crds.ts';
import { Kube } from '../toolkit/kube.ts';
import { type BundleResult, bundle } from './bundle.ts';

const VALUE = 'Zq9-bundle-test-s3cr3t-value';
const MULTILINE = 'first-secret-line-7731\nsecond-secret-line-8842\n';
const B64 = Buffer.from(VALUE).toString('base64');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

describe('lab:bundle core', () => {
  let lab: TestLab;
  let kube: Kube;
  let work: string;
  let result: BundleResult;
  let root: string;
  let entries: string[];

  beforeAll(async () => {
    lab = await startTestLab({ labName: 'bundle' });
    kube = Kube.fromFile(lab.server.kubeconfigPath);
    await kube.apply(projectCrds());
    await kube.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: red}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: red}
stringData:
  password: ${VALUE}
  cert: ${JSON.stringify(MULTILINE)}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: leaky, namespace: red}
data:
  copied: "password=${VALUE}"
  encoded: "${B64}"
  block: ${JSON.stringify(`header\n${MULTILINE}footer\n`)}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: red, annotations: {note: "${VALUE}"}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: red}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: grpc-backend, port: 9000}]}]
`);
    work = mkdtempSync(join(tmpdir(), 'gwlab-bundle-test-'));
    result = await bundle(kube, { lab: 'bundle', out: join(work, 'b.tar.gz'), collectorTimeoutMs: 30_000 });
    entries = [];
    await list({ file: result.path, onReadEntry: (e) => entries.push(e.path) });
    root = join(work, 'x');
    rmSync(root, { recursive: true, force: true });
    (await import('node:fs')).mkdirSync(root);
    await extract({ file: result.path, cwd: root });
  }, 120_000);

  afterAll(async () => {
    await lab?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('writes one archive whose first entry is index.md, listing every collector with its status', () => {
    expect(entries[0]).toBe('b/index.md');
    const md = readFileSync(join(root, 'b', 'index.md'), 'utf8');
    const status = (name: string) => new RegExp(`^\\| ${name} \\| (\\w+) \\|`, 'm').exec(md)?.[1];
    expect(status('resources')).toBe('ok');
    expect(status('events')).toBe('ok');
    expect(status('logs')).toBe('ok');
    expect(status('cluster')).toBe('ok');
    expect(status('namespaces')).toBe('ok');
    // No control plane runs here: failed, with the reason and what to run.
    expect(status('controlplane')).toBe('failed');
    expect(md).toMatch(
      /\| controlplane \| failed \|.*deployment gwvendor not found in gwvendor-system.*npm run lab:up/,
    );
    expect(status('proxies')).toBe('skipped');
    expect(md).toMatch(/\| proxies \| skipped \|.*no proxy pods/);
    expect(result.namespaces).toEqual(['gwvendor-system', 'red']);
    expect(result.collected).toBeGreaterThan(0);
  });

  it('holds the resources with the Secret as metadata only, the cluster information and index.json', () => {
    const b = join(root, 'b');
    const secret = readFileSync(join(b, 'resources/red/Secret.yaml'), 'utf8');
    expect(secret).toContain('name: creds');
    expect(secret).toMatch(/password: <redacted>/);
    expect(secret).toMatch(/cert: <redacted>/);
    expect(readFileSync(join(b, 'resources/red/Gateway.yaml'), 'utf8')).toContain('gatewayClassName: gwvendor');
    // Gateway API kinds the control plane does not read are in too: what the user wrote beside its routes.
    expect(readFileSync(join(b, 'resources/red/GRPCRoute.yaml'), 'utf8')).toContain('name: grpc-backend');
    expect(readFileSync(join(b, 'resources/_cluster/Namespace.yaml'), 'utf8')).toContain('name: red');
    expect(JSON.parse(readFileSync(join(b, 'cluster/version.json'), 'utf8')).gitVersion).toMatch(/^v1\./);
    expect(readFileSync(join(b, 'cluster/crds.yaml'), 'utf8')).toContain('name: httproutes.gateway.networking.k8s.io');
    const index = JSON.parse(readFileSync(join(b, 'index.json'), 'utf8'));
    expect(index.namespaces).toEqual(['gwvendor-system', 'red']);
    expect(index.redaction.replaced).toBeGreaterThanOrEqual(4);
    // Every file the index names is in the archive, and nothing else is.
    const named = ['index.md', 'index.json', ...index.collectors.flatMap((c: { files: string[] }) => c.files)].sort();
    expect(filesUnder(b)).toEqual(named);
  });

  it('never contains a Secret value (plain, base64, any line of a multi-line one) or the kubeconfig token', () => {
    const token = kube.kc.getCurrentUser()?.token;
    expect(token, 'the test lab authenticates with a token').toBeTruthy();
    const forbidden = [
      VALUE,
      B64,
      'first-secret-line-7731',
      'second-secret-line-8842',
      Buffer.from(MULTILINE).toString('base64'),
      token!,
    ];
    const leaks: string[] = [];
    for (const f of filesUnder(root)) {
      const text = readFileSync(join(root, f), 'utf8');
      for (const v of forbidden) if (text.includes(v)) leaks.push(`${f} contains ${v.slice(0, 12)}…`);
    }
    expect(leaks).toEqual([]);
    // The copies were there to be found: their redacted form is what the ConfigMap and the Gateway now hold.
    const b = join(root, 'b');
    expect(readFileSync(join(b, 'resources/red/ConfigMap.yaml'), 'utf8')).toContain('password=<redacted>');
    expect(readFileSync(join(b, 'resources/red/Gateway.yaml'), 'utf8')).toContain('note: <redacted>');
  });
});
