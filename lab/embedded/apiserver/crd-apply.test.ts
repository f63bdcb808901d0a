// Server-side apply of CustomResourceDefinitions keeps the schema's x-kubernetes-* extensions (preserve-unknown-
// fields, int-or-string, embedded-resource, list-type/-map-keys, map-type, validations) on create, on a changed
// re-apply and after a client-side apply; and the custom resources then keep what those extensions allow.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
beforeAll(async () => {
  lab = await startTestLab();
});
afterAll(async () => {
  await lab?.stop();
});

const crd = (plural: string, kind: string, extraProp = '') => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.x.example.com` },
  spec: {
    group: 'x.example.com',
    scope: 'Namespaced',
    names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [{ rule: 'self.size >= 0', message: 'size must be >= 0' }],
                properties: {
                  size: { type: 'integer' },
                  port: { 'x-kubernetes-int-or-string': true },
                  template: {
                    type: 'object',
                    'x-kubernetes-embedded-resource': true,
                    'x-kubernetes-preserve-unknown-fields': true,
                  },
                  labels: {
                    type: 'object',
                    additionalProperties: { type: 'string' },
                    'x-kubernetes-map-type': 'granular',
                  },
                  listeners: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
                  },
                  ...(extraProp ? { [extraProp]: { type: 'string' } } : {}),
                },
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
});

const EXTENSIONS = (schema: any) => ({
  validations: schema.properties.spec['x-kubernetes-validations'],
  intOrString: schema.properties.spec.properties.port['x-kubernetes-int-or-string'],
  embedded: schema.properties.spec.properties.template['x-kubernetes-embedded-resource'],
  preserveTemplate: schema.properties.spec.properties.template['x-kubernetes-preserve-unknown-fields'],
  mapType: schema.properties.spec.properties.labels['x-kubernetes-map-type'],
  listType: schema.properties.spec.properties.listeners['x-kubernetes-list-type'],
  listKeys: schema.properties.spec.properties.listeners['x-kubernetes-list-map-keys'],
  preserveStatus: schema.properties.status['x-kubernetes-preserve-unknown-fields'],
});
const EXPECTED = {
  validations: [{ rule: 'self.size >= 0', message: 'size must be >= 0' }],
  intOrString: true,
  embedded: true,
  preserveTemplate: true,
  mapType: 'granular',
  listType: 'map',
  listKeys: ['name'],
  preserveStatus: true,
};

async function storedSchema(name: string) {
  const o = JSON.parse(await lab.k(['get', 'crd', name, '-o', 'json']));
  return o.spec.versions[0].schema.openAPIV3Schema;
}

/** The request client-node's KubernetesObjectApi.patch(obj, ..., PatchStrategy.ServerSideApply) makes. */
async function applyPatch(obj: any, manager: string) {
  const { Agent, fetch } = await import('undici');
  const agent = new Agent({ connect: { ca: lab.server.caPem } });
  try {
    const r = await fetch(
      `${lab.server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${obj.metadata.name}?fieldManager=${manager}&force=true`,
      {
        method: 'PATCH',
        dispatcher: agent,
        headers: { Authorization: `Bearer ${lab.server.adminToken}`, 'Content-Type': 'application/apply-patch+yaml' },
        body: JSON.stringify(obj),
      },
    );
    const body = (await r.json()) as any;
    expect(r.status, JSON.stringify(body)).toBeLessThan(300);
    return body;
  } finally {
    await agent.close();
  }
}

it('kubectl apply --server-side keeps every x-kubernetes-* key, on create and on a changed re-apply', async () => {
  const name = 'gadgets.x.example.com';
  await lab.k(['apply', '--server-side', '-f', '-'], JSON.stringify(crd('gadgets', 'Gadget')));
  expect(EXTENSIONS(await storedSchema(name))).toEqual(EXPECTED);
  await lab.k(['apply', '--server-side', '-f', '-'], JSON.stringify(crd('gadgets', 'Gadget', 'color')));
  const s = await storedSchema(name);
  expect(EXTENSIONS(s)).toEqual(EXPECTED);
  expect(s.properties.spec.properties.color).toEqual({ type: 'string' });
  // client-side apply first, then a server-side apply by another manager (a common migration).
  await lab.k(['apply', '-f', '-'], JSON.stringify(crd('things', 'Thing')));
  await lab.k(
    ['apply', '--server-side', '--force-conflicts', '-f', '-'],
    JSON.stringify(crd('things', 'Thing', 'color')),
  );
  expect(EXTENSIONS(await storedSchema('things.x.example.com'))).toEqual(EXPECTED);
});

it('an apply-patch request body (what client-node sends for an object in its model form) keeps them in the response, the store and the served schema', async () => {
  const applied = await applyPatch(crd('widgets', 'Widget'), 'toolkit');
  expect(EXTENSIONS(applied.spec.versions[0].schema.openAPIV3Schema)).toEqual(EXPECTED);
  const again = await applyPatch(crd('widgets', 'Widget', 'color'), 'toolkit');
  expect(EXTENSIONS(again.spec.versions[0].schema.openAPIV3Schema)).toEqual(EXPECTED);
  expect(EXTENSIONS(await storedSchema('widgets.x.example.com'))).toEqual(EXPECTED);
  expect(again.metadata.managedFields.map((m: any) => m.manager)).toContain('toolkit');

  // The schema is in force: status (preserve-unknown-fields) and spec.template keep unknown fields.
  await lab.k(['wait', '--for=condition=established', '--timeout=15s', 'crd/widgets.x.example.com']);
  await lab.k(
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify({
      apiVersion: 'x.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'default' },
      spec: {
        size: 1,
        port: 'http',
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, anything: 1 },
      },
    }),
  );
  const status = { conditions: [{ type: 'Ready', status: 'True' }], free: { form: true } };
  await lab.k(['patch', 'widget', 'w1', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  const w = JSON.parse(await lab.k(['get', 'widget', 'w1', '-o', 'json']));
  expect(w.status).toEqual(status);
  expect(w.spec.template.anything).toBe(1);
  expect(w.spec.port).toBe('http');
});
