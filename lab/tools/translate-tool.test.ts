// The translate tool (translate-tool.ts, translate-tool-input.ts, scripts/translate.ts): the control plane's golden
// cases come out equal to its own golden IR and xDS, input is narrowed to what the informers read, --gateway, --only
// and -o select and shape the output, and the npm script reads stdin and reports bad input by file and document.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { redactSecrets } from '../../system/shared/envoy/redact.ts';
import { renderTranslation, translate } from './translate-tool.ts';
import { parseSources, readSources } from './translate-tool-input.ts';

const GOLDEN = new URL('../../system/controlplane/testdata/', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'gwlab-translate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const fromText = (text: string, source = 'input.yaml') => parseSources([{ source, text }]);

const GATEWAY = (ns: string, name: string, cls = 'gwvendor') => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: ${ns}}
spec:
  gatewayClassName: ${cls}
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
`;
const ROUTE = (ns: string, name: string, gw: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{name: ${gw.split('/')[1]}, namespace: ${gw.split('/')[0]}}]
  hostnames: [${name}.example.com]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
`;
const SERVICE = (ns: string) => `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: ${ns}}
spec: {ports: [{port: 80}]}
`;

describe('translate: the golden cases of the control plane', () => {
  const cases = readdirSync(GOLDEN).filter((d) => !d.includes('.'));
  it('has cases', () => expect(cases.length).toBeGreaterThan(5));
  for (const name of cases) {
    it(`${name}: IR and xDS equal the golden output (xDS as sent: Any-encoded and decoded)`, () => {
      const file = join(GOLDEN, name, 'input.yaml');
      const text = readFileSync(file, 'utf8');
      const validation = /^#\s*validation:\s*off/.test(text) ? 'off' : 'strict';
      const out = translate(parseSources(readSources([file])), { validation });
      // The golden xDS is as on the wire; the tool's output has private keys redacted, as every dump of the project.
      expect(out.xds).toEqual(redactSecrets(JSON.parse(readFileSync(join(GOLDEN, name, 'xds.json'), 'utf8'))));
      expect(out.ir).toEqual(JSON.parse(readFileSync(join(GOLDEN, name, 'ir.json'), 'utf8')));
      // No private key in the clear anywhere (base64 of "-----BEGIN PRIVATE").
      expect(JSON.stringify(out)).not.toContain('LS0tLS1CRUdJTiBQUklWQVRF');
    });
  }
});

describe('translate: input', () => {
  it('reads directories recursively in name order, manifests only; - is stdin', () => {
    const dir = join(tmp, 'tree');
    mkdirSync(join(dir, 'b', 'c'), { recursive: true });
    writeFileSync(join(dir, 'a.yaml'), SERVICE('one'));
    writeFileSync(join(dir, 'b', 'c', 'd.yml'), SERVICE('two'));
    writeFileSync(join(dir, 'b', 'e.json'), JSON.stringify(parse(SERVICE('three'))));
    writeFileSync(join(dir, 'b', 'README.md'), '# not a manifest');
    const src = readSources([dir, '-'], () => SERVICE('four'));
    expect(src.map((s) => s.source)).toEqual([
      join(dir, 'a.yaml'),
      join(dir, 'b', 'c', 'd.yml'),
      join(dir, 'b', 'e.json'),
      '<stdin>',
    ]);
    expect(parseSources(src).map((o) => o.object.metadata.namespace)).toEqual(['one', 'two', 'three', 'four']);
    expect(() => readSources([join(tmp, 'absent')])).toThrow(/-f .*absent: no such file or directory/);
  });

  it('names the file and document of bad input', () => {
    expect(() => fromText(`${SERVICE('a')}---\nkind: [\n`, 'x.yaml')).toThrow(/^x\.yaml: document 2: /);
    expect(() => fromText(`${SERVICE('a')}---\napiVersion: v1\nkind: Service\nmetadata: {namespace: a}\n`)).toThrow(
      'input.yaml: document 2: Service has no metadata.name',
    );
    expect(() => fromText('apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, metadata: {name: a}}]\n')).toThrow(
      'input.yaml: document 1, item 1: has no kind',
    );
    expect(() => fromText('just a string\n')).toThrow('input.yaml: document 1: not a Kubernetes object');
  });

  it('skips what the control plane does not read, with a note; a labelled proxy Deployment is read', () => {
    const out = translate(
      fromText(`${GATEWAY('ns', 'gw')}---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: ns}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cm, namespace: ns}
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: istio, namespace: ns}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gw, namespace: ns, labels: {gateway.networking.k8s.io/gateway-name: gw}}
status: {replicas: 1, readyReplicas: 1}
---
apiVersion: v1
kind: Service
metadata: {name: gw, namespace: ns}
spec: {type: LoadBalancer, ports: [{port: 8080}]}
status: {loadBalancer: {ingress: [{ip: 10.0.0.9}]}}
`),
    );
    expect(out.notes).toEqual(
      expect.arrayContaining([
        'input.yaml: document 2: Deployment ns/app skipped: the control plane reads only Deployments labelled gateway.networking.k8s.io/gateway-name',
        'input.yaml: document 3: PersistentVolumeClaim ns/cm skipped: the control plane does not read v1 PersistentVolumeClaim',
        'input.yaml: document 4: Gateway ns/istio skipped: the control plane does not read networking.istio.io/v1 Gateway',
      ]),
    );
    const programmed = (out.status['gateways/ns/gw'].conditions as any[]).find((c) => c.type === 'Programmed');
    expect(programmed).toMatchObject({ status: 'True', message: 'address 10.0.0.9; 1 ready proxy replica(s)' });
  });

  it('takes GatewayClass gwvendor from the install manifest when the input lacks it; another class is noted', () => {
    const out = translate(fromText(`${GATEWAY('ns', 'gw')}---${GATEWAY('ns', 'other', 'foreign')}`));
    expect(Object.keys(out.ir)).toEqual(['ns/gw']);
    expect(Object.keys(out.xds)).toEqual(['gwvendor-kube-gateway-api~ns~gw']);
    expect(out.status['gatewayclasses/gwvendor']).toBeDefined();
    expect(out.notes.join('\n')).toMatch(
      /GatewayClass gwvendor is not in the input: using the one the install creates/,
    );
    expect(out.notes.join('\n')).toMatch(/GatewayClass foreign is not in the input/);
    expect(out.notes.join('\n')).toMatch(/Gateway ns\/other \(class foreign\) produced no configuration/);
  });

  it('a later document replaces an earlier one with the same kind and name, as kubectl apply would', () => {
    const out = translate(fromText(`${GATEWAY('ns', 'gw')}---${GATEWAY('ns', 'gw').replace('8080', '9090')}`));
    expect(out.ir['ns/gw'].listeners.map((l) => l.port)).toEqual([9090]);
    expect(out.notes).toContain('input.yaml: document 2: Gateway ns/gw replaces the one in input.yaml: document 1');
  });
});

describe('translate: --gateway, --only and output', () => {
  const input = () =>
    fromText(
      [
        GATEWAY('a', 'gw'),
        GATEWAY('b', 'gw'),
        ROUTE('a', 'ra', 'a/gw'),
        ROUTE('b', 'rb', 'b/gw'),
        SERVICE('a'),
        SERVICE('b'),
      ].join('---'),
    );

  it('keeps one Gateway: its IR, its role, and the statuses of what names it', () => {
    const out = translate(input(), { gateway: 'b/gw' });
    expect(Object.keys(out.ir)).toEqual(['b/gw']);
    expect(Object.keys(out.xds)).toEqual(['gwvendor-kube-gateway-api~b~gw']);
    expect(Object.keys(out.status).sort()).toEqual(['gatewayclasses/gwvendor', 'gateways/b/gw', 'httproutes/b/rb']);
    expect(out.notes.join('\n')).toMatch(
      /--gateway b\/gw: 2 status\(es\) of resources that do not name it are left out/,
    );
    expect(() => translate(input(), { gateway: 'c/gw' })).toThrow(
      /no such Gateway in the input \(Gateways: a\/gw, b\/gw\)/,
    );
    expect(() => translate(input(), { gateway: 'gw' })).toThrow(/<namespace>\/<name>/);
  });

  it('keeps the BackendConfigPolicies whose ancestor is the Gateway (--gateway), with the cluster settings they set', () => {
    const text = readFileSync(join(GOLDEN, 'backend-config-policy', 'input.yaml'), 'utf8');
    const out = translate(fromText(text), { gateway: 'default/gw' });
    expect(Object.keys(out.status).filter((k) => k.startsWith('backendconfigpolicies/'))).toEqual([
      'backendconfigpolicies/default/app-admin',
      'backendconfigpolicies/default/app-all',
      'backendconfigpolicies/default/app-newer',
      'backendconfigpolicies/default/bad',
      'backendconfigpolicies/default/grpc-h2',
    ]);
    const app = out.xds['gwvendor-kube-gateway-api~default~gw']!.clusters.find(
      (c) => c.name === 'kube_default_app_8000',
    );
    expect(app?.health_checks).toBeDefined();
    expect((app!.metadata as any).filter_metadata['merge.BackendConfigPolicy.gateway.gwvendor.dev'].healthCheck).toBe(
      'BackendConfigPolicy/default/app-all',
    );
  });

  it('--gateway keeps the statuses of the ListenerPolicies naming that Gateway', () => {
    const file = join(GOLDEN, 'listener-policy', 'input.yaml');
    const out = translate(parseSources(readSources([file])), { gateway: 'default/gw' });
    expect(
      Object.keys(out.status)
        .filter((k) => k.startsWith('listenerpolicies/'))
        .sort(),
    ).toEqual([
      'listenerpolicies/default/admin-only',
      'listenerpolicies/default/bad-format',
      'listenerpolicies/default/gateway-wide',
      'listenerpolicies/default/newer-gateway',
      'listenerpolicies/default/no-listener',
    ]);
    const other = translate(parseSources(readSources([file])), { gateway: 'default/gw2' });
    expect(Object.keys(other.status).filter((k) => k.startsWith('listenerpolicies/'))).toEqual([]);
  });

  it('renders YAML with a header by default, JSON with -o json, one section with --only', () => {
    const out = translate(input(), { gateway: 'a/gw' });
    const yaml = renderTranslation(out, { header: ['hello'] });
    expect(yaml.startsWith('# hello\n')).toBe(true);
    expect(Object.keys(parse(yaml))).toEqual(['ir', 'xds', 'status']);
    const xds = JSON.parse(renderTranslation(out, { output: 'json', only: 'xds' }));
    const role = xds['gwvendor-kube-gateway-api~a~gw'];
    expect(Object.keys(role)).toEqual(['listeners', 'routes', 'clusters', 'endpoints']);
    expect(role.clusters.map((c: any) => c.name)).toEqual(['kube_a_svc_80']);
    expect(JSON.stringify(role.routes)).toContain('ra.example.com');
  });
});

describe('npm run translate (scripts/translate.ts)', () => {
  const SCRIPT = new URL('../../scripts/translate.ts', import.meta.url).pathname;
  const cli = (args: string[], input?: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [SCRIPT, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(input ?? '');
    });

  it('reads stdin with -f -, prints JSON with -o json, notes on stderr; bad input exits 1 naming file and document', async () => {
    const ok = await cli(
      ['-f', '-', '-o', 'json', '--only', 'xds'],
      [GATEWAY('a', 'gw'), ROUTE('a', 'r', 'a/gw'), SERVICE('a')].join('---'),
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(Object.keys(JSON.parse(ok.stdout))).toEqual(['gwvendor-kube-gateway-api~a~gw']);
    expect(ok.stderr).toMatch(/note: GatewayClass gwvendor is not in the input/);
    const bad = join(tmp, 'bad.yaml');
    writeFileSync(bad, `${SERVICE('a')}---\napiVersion: v1\nkind: Service\n`);
    const r = await cli(['-f', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}: document 2: Service has no metadata.name`);
    expect((await cli(['--only', 'xds'])).code, 'no -f is a usage error').toBe(2);
  });
});
