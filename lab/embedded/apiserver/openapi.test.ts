// OpenAPI v2 and v3 as kubectl 1.32 uses them against a real API server: `kubectl explain` of the Gateway API
// v1.6.1 CRDs prints upstream's field docs (v3, per group-version, with the CRD's schema); `kubectl apply -f` of a
// `kind: List` validates each item client-side against `/openapi/v2`, which kubectl reads only as gnostic protobuf
// (client-go discovery OpenAPISchema), naming unknown fields as kubectl does against kube-apiserver
// (`ValidationError(ConfigMap): unknown field "foo" in io.k8s.api.core.v1.ConfigMap`); single objects still get the
// server's strict field validation; client-side apply of built-ins builds strategic merge patches from the v2
// patch metadata; CRD schemas appear when a CRD is established and go when it is deleted, with hashes and ETags.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, closeApiAgents } from './testing/requests.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

const STANDARD = join(import.meta.dirname, '../../../system/manifests/gateway-api/standard-install.yaml');
const GATEWAY_GV = '/openapi/v3/apis/gateway.networking.k8s.io/v1';

let lab: TestLab;
beforeAll(async () => {
  lab = await startTestLab();
  await lab.k(['apply', '--server-side', '-f', STANDARD]);
}, 120_000);
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

const list = (...items: string[]) => `apiVersion: v1\nkind: List\nitems:\n${items.join('')}`;
const configMapItem = (name: string, extra = '') =>
  `- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: ${name}, namespace: default}\n  data: {a: b}\n${extra}`;
const routeItem = (name: string, specExtra = '', refExtra = '') =>
  `- apiVersion: gateway.networking.k8s.io/v1\n  kind: HTTPRoute\n  metadata: {name: ${name}, namespace: default}\n  spec:\n${specExtra}    rules:\n    - backendRefs: [{name: svc, port: 80${refExtra}}]\n`;

describe('kubectl explain (OpenAPI v3)', () => {
  it('gateway.spec.listeners prints the upstream field docs', async () => {
    const out = await lab.k(['explain', 'gateway.spec.listeners']);
    expect(out).toContain('GROUP:      gateway.networking.k8s.io');
    expect(out).toContain('FIELD: listeners <[]Object>');
    expect(out).toContain('Listeners associated with this Gateway. Listeners define');
    expect(out).toMatch(/allowedRoutes\s+<Object>/);
    expect(out).toMatch(/protocol\s+<string> -required-/);
  });

  it('httproute.spec.rules.matches --recursive lists every nested field', async () => {
    const out = await lab.k(['explain', 'httproute.spec.rules.matches', '--recursive']);
    expect(out).toContain('Matches define conditions used for matching the rule against incoming');
    for (const f of ['headers', 'method', 'path', 'queryParams', 'type', 'value'])
      expect(out).toMatch(new RegExp(`\\n\\s+${f}\\s+<`));
  });

  it('deployment.spec.replicas (built-in) and a custom resource metadata (ObjectMeta)', async () => {
    const d = await lab.k(['explain', 'deployment.spec.replicas']);
    expect(d).toContain('KIND:       Deployment');
    expect(d).toContain('FIELD: replicas <integer>');
    const c = await lab.k(['explain', 'deployment.spec.template.spec.containers']);
    expect(c).toContain('FIELD: containers <[]Container>');
    const m = await lab.k(['explain', 'gateway.metadata.labels']);
    expect(m).toContain('FIELD: labels <map[string]string>');
  });
});

describe('kubectl apply of a kind: List (OpenAPI v2, protobuf)', () => {
  it('creates a ConfigMap and an HTTPRoute', async () => {
    const r = await lab.kubectl(['apply', '-f', '-'], {
      input: list(configMapItem('list-cm'), routeItem('list-route')),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('configmap/list-cm created');
    expect(r.stdout).toContain('httproute.gateway.networking.k8s.io/list-route created');
  });

  it('names the unknown fields of its items, built-in and custom, and creates nothing', async () => {
    const r = await lab.kubectl(['apply', '-f', '-'], {
      input: list(configMapItem('bad-cm', '  foo: bar\n'), routeItem('bad-route', '    bogus: 1\n', ', weightt: 1')),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('ValidationError(ConfigMap): unknown field "foo" in io.k8s.api.core.v1.ConfigMap');
    expect(r.stderr).toContain(
      'ValidationError(HTTPRoute.spec): unknown field "bogus" in io.k8s.networking.gateway.v1.HTTPRoute.spec',
    );
    expect(r.stderr).toContain(
      'unknown field "weightt" in io.k8s.networking.gateway.v1.HTTPRoute.spec.rules.backendRefs',
    );
    expect((await lab.kubectl(['get', 'configmap', 'bad-cm'])).code).not.toBe(0);
  });
});

describe('single objects keep the server-side field validation', () => {
  it('kubectl apply (client-side) and kubectl create --validate=strict name unknown fields', async () => {
    const route = `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: strict-route, namespace: default}\nspec:\n  bogus: 1\n`;
    const a = await lab.kubectl(['apply', '-f', '-'], { input: route });
    expect(a.code).not.toBe(0);
    expect(a.stderr).toContain('unknown field "spec.bogus"');
    const c = await lab.kubectl(['create', '--validate=strict', '-f', '-'], {
      input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict-cm, namespace: default}\nfoo: bar\n',
    });
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain('unknown field "foo"');
  });

  it('client-side apply of a Deployment merges containers by name (v2 patch metadata)', async () => {
    const deploy = (image: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: csa, namespace: default}\nspec:\n  selector: {matchLabels: {app: csa}}\n  template:\n    metadata: {labels: {app: csa}}\n    spec:\n      containers:\n      - {name: a, image: a}\n      - {name: b, image: ${image}}\n`;
    await lab.k(['apply', '-f', '-'], deploy('b1'));
    const r = await lab.kubectl(['apply', '-f', '-', '-v=8'], { input: deploy('b2') });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('$setElementOrder/containers');
    expect(await lab.k(['get', 'deploy', 'csa', '-o', 'jsonpath={.spec.template.spec.containers[*].image}'])).toBe(
      'a b2',
    );
  });
});

describe('documents follow the CRDs', () => {
  it('v3 index hashes match the ETags; a deleted CRD leaves v2 and v3, a created one joins them', async () => {
    const index = (await api(lab, 'GET', '/openapi/v3')).json;
    const url: string = index.paths['apis/gateway.networking.k8s.io/v1'].serverRelativeURL;
    const doc = await api(lab, 'GET', url);
    expect(doc.status).toBe(200);
    expect(doc.headers.get('etag')).toBe(`"${url.split('hash=')[1]}"`);
    expect(doc.json.components.schemas['io.k8s.networking.gateway.v1.GRPCRoute']).toBeDefined();
    const v2 = (await api(lab, 'GET', '/openapi/v2')).json;
    expect(v2.swagger).toBe('2.0');
    expect(v2.definitions['io.k8s.networking.gateway.v1.GRPCRoute']['x-kubernetes-group-version-kind']).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', version: 'v1' },
    ]);

    await lab.k(['delete', 'crd', 'grpcroutes.gateway.networking.k8s.io']);
    const after = (await api(lab, 'GET', GATEWAY_GV)).json;
    expect(after.components.schemas['io.k8s.networking.gateway.v1.GRPCRoute']).toBeUndefined();
    expect(after.components.schemas['io.k8s.networking.gateway.v1.Gateway']).toBeDefined();
    expect(
      (await api(lab, 'GET', '/openapi/v3')).json.paths['apis/gateway.networking.k8s.io/v1'].serverRelativeURL,
    ).not.toBe(url);
    expect(
      (await api(lab, 'GET', '/openapi/v2')).json.definitions['io.k8s.networking.gateway.v1.GRPCRoute'],
    ).toBeUndefined();

    await lab.k(['apply', '--server-side', '-f', STANDARD]);
    expect(
      (await api(lab, 'GET', GATEWAY_GV)).json.components.schemas['io.k8s.networking.gateway.v1.GRPCRoute'],
    ).toBeDefined();
    expect(
      (await api(lab, 'GET', '/openapi/v3')).json.paths['apis/gateway.networking.k8s.io/v1'].serverRelativeURL,
    ).toBe(url);
  });
});
