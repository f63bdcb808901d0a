// x-kubernetes-validations end to end (a CRD created through the API, custom resources created and updated through
// it), as kube-apiserver 1.32 evaluates them (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go,
// pkg/registry/customresource/strategy.go): messages, messageExpression, reason → Status cause type, fieldPath,
// transition rules and optionalOldSelf, list-type set equality, OpenAPI errors that skip CEL and those that do not,
// OpenAPI formats, and CRDs refused for a rule that does not compile or costs too much.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, closeApiAgents } from '../testing/requests.ts';
import { startTestLab, type TestLab } from '../testing/test-lab.ts';

let lab: TestLab;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W = '/apis/cel.example.com/v1/namespaces/default/widgets';

const crd = (spec: object, extra: object[] = []) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.cel.example.com' },
  spec: {
    group: 'cel.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            'x-kubernetes-validations': [
              { rule: "self.metadata.name.startsWith('w')", message: 'name must start with w' },
              ...extra,
            ],
            properties: { spec },
          },
        },
      },
    ],
  },
});

const widgetSpec = {
  type: 'object',
  'x-kubernetes-validations': [
    { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must be <= maxReplicas' },
    { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable' },
    { rule: '!has(self.forbidden)', reason: 'FieldValueForbidden', message: 'may not be set', fieldPath: '.forbidden' },
    { rule: 'self.replicas < 10', messageExpression: "'replicas ' + string(self.replicas) + ' is too many'" },
    {
      rule: '!oldSelf.hasValue() || oldSelf.value().tier <= self.tier',
      optionalOldSelf: true,
      message: 'tier may only grow',
    },
    { rule: 'self.ratio < 2.5', message: 'ratio too large' },
  ],
  properties: {
    minReplicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    replicas: { type: 'integer' },
    ratio: { type: 'number' },
    tier: { type: 'integer' },
    mode: { type: 'string' },
    forbidden: { type: 'string' },
    short: { type: 'string', maxLength: 5 },
    code: { type: 'string', pattern: '^[a-z]+$' },
    ip: { type: 'string', format: 'ipv4' },
    tags: {
      type: 'array',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'tags are immutable' }],
    },
  },
};

const base = { minReplicas: 1, maxReplicas: 3, replicas: 2, ratio: 1, tier: 1, mode: 'a', tags: ['x', 'y'] };
const widget = (name: string, spec: object) => ({
  apiVersion: 'cel.example.com/v1',
  kind: 'Widget',
  metadata: { name },
  spec: { ...base, ...spec },
});

beforeAll(async () => {
  lab = await startTestLab();
  const r = await api(lab, 'POST', CRDS, { body: crd(widgetSpec) });
  expect(r.status, r.text).toBe(201);
});
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

async function create(name: string, spec: object = {}) {
  return api(lab, 'POST', W, { body: widget(name, spec) });
}

describe('custom resources', () => {
  it('accepts an object every rule holds for (integers are CEL ints, numbers doubles even when integral)', async () => {
    const r = await create('w-ok');
    expect(r.status, r.text).toBe(201);
  });

  it("refuses a failed rule with its message, at the rule's location, value the schema type", async () => {
    const r = await create('w-minmax', { minReplicas: 5 });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'Widget.cel.example.com "w-minmax" is invalid: spec: Invalid value: "object": minReplicas must be <= maxReplicas',
    );
    expect(r.json.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec',
        message: 'Invalid value: "object": minReplicas must be <= maxReplicas',
      },
    ]);
    expect((await api(lab, 'GET', `${W}/w-minmax`)).status).toBe(404);
  });

  it('evaluates root rules on apiVersion, kind and metadata.name', async () => {
    const r = await create('bad-name');
    expect(r.json.message).toContain('<nil>: Invalid value: "object": name must start with w');
  });

  it('reason FieldValueForbidden and fieldPath make a Forbidden cause at the named field', async () => {
    const r = await create('w-forbidden', { forbidden: 'x' });
    expect(r.json.details.causes).toEqual([
      { reason: 'FieldValueForbidden', field: 'spec.forbidden', message: 'Forbidden: may not be set' },
    ]);
  });

  it('messageExpression gives the message', async () => {
    const r = await create('w-many', { replicas: 12 });
    expect(r.json.message).toContain('spec: Invalid value: "object": replicas 12 is too many');
  });

  it('a double field compares as a double', async () => {
    expect((await create('w-ratio', { ratio: 3 })).json.message).toContain('ratio too large');
  });

  it('checks OpenAPI formats: format ipv4 refuses 1.2.3', async () => {
    const r = await create('w-ip', { ip: '1.2.3' });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3"');
    expect((await create('w-ip2', { ip: '10.1.2.3' })).status).toBe(201);
  });

  it("OpenAPI errors of type TooLong skip the CEL rules, with kube's notice", async () => {
    const r = await create('w-long', { short: 'toolong', minReplicas: 5 });
    expect(r.json.message).toContain('spec.short: Too long: may not be more than 5 bytes');
    expect(r.json.message).toContain(
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    );
    expect(r.json.message).not.toContain('minReplicas must be');
  });

  it('pattern errors do not skip the CEL rules', async () => {
    const r = await create('w-pattern', { code: 'A1', minReplicas: 5 });
    expect(r.json.message).toContain("spec.code in body should match '^[a-z]+$'");
    expect(r.json.message).toContain('minReplicas must be <= maxReplicas');
  });
});

describe('transition rules', () => {
  const put = async (name: string, spec: object) => {
    const cur = (await api(lab, 'GET', `${W}/${name}`)).json;
    return api(lab, 'PUT', `${W}/${name}`, { body: { ...cur, spec: { ...cur.spec, ...spec } } });
  };

  it('run only on update: oldSelf is the stored value', async () => {
    expect((await create('w-t1', { mode: 'b' })).status).toBe(201);
    const r = await put('w-t1', { mode: 'c' });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('spec: Invalid value: "object": mode is immutable');
    expect((await put('w-t1', { replicas: 3 })).status).toBe(200);
  });

  it('optionalOldSelf: oldSelf is optional.none() on create and the old value on update', async () => {
    expect((await create('w-t2', { tier: 5 })).status).toBe(201);
    expect((await put('w-t2', { tier: 6 })).status).toBe(200);
    expect((await put('w-t2', { tier: 2 })).json.message).toContain('tier may only grow');
  });

  it('ratcheting: an update leaving a failing value unchanged passes; changing it is checked', async () => {
    // Stored before the rule existed: created, then the CRD gains a rule the object breaks.
    expect((await create('w-t4')).status).toBe(201);
    const crdNow = (await api(lab, 'GET', `${CRDS}/widgets.cel.example.com`)).json;
    const strict = structuredClone(crdNow);
    strict.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'].push({
      rule: 'self.replicas > 5',
      message: 'replicas must be above 5',
    });
    expect((await api(lab, 'PUT', `${CRDS}/widgets.cel.example.com`, { body: strict })).status).toBe(200);
    try {
      // spec unchanged (a label added): ratcheted.
      const cur = (await api(lab, 'GET', `${W}/w-t4`)).json;
      cur.metadata.labels = { touched: 'yes' };
      expect((await api(lab, 'PUT', `${W}/w-t4`, { body: cur })).status).toBe(200);
      // spec changed: the rule applies.
      expect((await put('w-t4', { replicas: 3 })).json.message).toContain('replicas must be above 5');
    } finally {
      const back = (await api(lab, 'GET', `${CRDS}/widgets.cel.example.com`)).json;
      back.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'].pop();
      expect((await api(lab, 'PUT', `${CRDS}/widgets.cel.example.com`, { body: back })).status).toBe(200);
    }
  });

  it('list-type set values compare equal in any order', async () => {
    expect((await create('w-t3')).status).toBe(201);
    expect((await put('w-t3', { tags: ['y', 'x'] })).status).toBe(200);
    const r = await put('w-t3', { tags: ['x', 'z'] });
    expect(r.json.message).toContain('spec.tags: Invalid value: "array": tags are immutable');
  });
});

describe('runtime cost limits', () => {
  const costly = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'costlies.cel.example.com' },
    spec: {
      group: 'cel.example.com',
      scope: 'Namespaced',
      names: { plural: 'costlies', singular: 'costly', kind: 'Costly', listKind: 'CostlyList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    // Estimated ~3.3M: under the 10M limit at CRD write; over 1M per call with 400 names.
                    names: {
                      type: 'array',
                      maxItems: 500,
                      items: { type: 'string', maxLength: 10 },
                      'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }],
                    },
                    // Each item's rule is cheap; 500 of them with 60 tags each exceed the request's 10M budget.
                    items: {
                      type: 'array',
                      maxItems: 500,
                      items: {
                        type: 'object',
                        'x-kubernetes-validations': [{ rule: 'self.tags.all(t, self.tags.exists(u, u == t))' }],
                        properties: { tags: { type: 'array', maxItems: 60, items: { type: 'string', maxLength: 10 } } },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  const C = '/apis/cel.example.com/v1/namespaces/default/costlies';
  const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);

  beforeAll(async () => {
    const r = await api(lab, 'POST', CRDS, { body: costly });
    expect(r.status, r.text).toBe(201);
  });

  it("a call over PerCallLimit (1,000,000) stops validation with kube's message", async () => {
    expect(
      (
        await api(lab, 'POST', C, {
          body: {
            apiVersion: 'cel.example.com/v1',
            kind: 'Costly',
            metadata: { name: 'c1' },
            spec: { names: names(50) },
          },
        })
      ).status,
    ).toBe(201);
    const r = await api(lab, 'POST', C, {
      body: { apiVersion: 'cel.example.com/v1', kind: 'Costly', metadata: { name: 'c2' }, spec: { names: names(400) } },
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      'spec.names: Invalid value: "array": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x == y || x != y))',
    );
  });

  it("rules over the request's RuntimeCELCostBudget (10,000,000) stop validation", async () => {
    const items = Array.from({ length: 500 }, () => ({ tags: names(60) }));
    const r = await api(lab, 'POST', C, {
      body: { apiVersion: 'cel.example.com/v1', kind: 'Costly', metadata: { name: 'c3' }, spec: { items } },
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      'Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    );
  });
});

describe('CRDs whose rules cannot run are refused', () => {
  const other = (spec: object) => {
    const c = crd(spec) as any;
    c.metadata.name = 'gadgets.cel.example.com';
    c.spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' };
    return c;
  };

  it("a rule selecting an undeclared field, at the rule's path, and nothing is stored", async () => {
    const r = await api(lab, 'POST', CRDS, {
      body: other({
        type: 'object',
        properties: { a: { type: 'string' } },
        'x-kubernetes-validations': [{ rule: 'self.nope == 1' }],
      }),
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.nope == 1"',
    );
    expect(r.json.message).toContain("compilation failed: ERROR: <input>:1:5: undefined field 'nope'");
    expect((await api(lab, 'GET', `${CRDS}/gadgets.cel.example.com`)).status).toBe(404);
  });

  it('two versions with one schema: compiled once, each version named at its own path', async () => {
    const c = other({
      type: 'object',
      properties: { a: { type: 'string' } },
      'x-kubernetes-validations': [{ rule: 'self.twice == 1' }],
    });
    c.spec.versions.push({ ...structuredClone(c.spec.versions[0]), name: 'v1beta1', storage: false });
    const r = await api(lab, 'POST', CRDS, { body: c });
    expect(r.status).toBe(422);
    for (const v of [0, 1])
      expect(r.json.message).toContain(
        `spec.versions[${v}].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.twice == 1"`,
      );
    expect((await api(lab, 'GET', `${CRDS}/gadgets.cel.example.com`)).status).toBe(404);
  });

  it('an operator without an overload for the declared types', async () => {
    const r = await api(lab, 'POST', CRDS, {
      body: other({
        type: 'object',
        properties: { a: { type: 'string' } },
        'x-kubernetes-validations': [{ rule: 'self.a == 1' }],
      }),
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(string, int)'",
    );
  });

  it('a rule that does not evaluate to a bool', async () => {
    const r = await api(lab, 'POST', CRDS, {
      body: other({
        type: 'object',
        properties: { a: { type: 'string' } },
        'x-kubernetes-validations': [{ rule: 'self.a' }],
      }),
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      'x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.a"',
    );
    expect(r.json.message).toContain(': cel expression must evaluate to a bool');
  });

  it('a rule that does not parse', async () => {
    const r = await api(lab, 'POST', CRDS, {
      body: other({
        type: 'object',
        'x-kubernetes-validations': [{ rule: 'self.a ==' }],
        properties: { a: { type: 'string' } },
      }),
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule');
    expect(r.json.message).toContain('compilation failed: ERROR:');
  });

  it("a rule over the estimated cost limit, with kube's message", async () => {
    const r = await api(lab, 'POST', CRDS, {
      body: other({
        type: 'object',
        properties: {
          names: {
            type: 'array',
            items: { type: 'string' },
            'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }],
          },
        },
      }),
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    );
  });

  it('the same rule with maxItems and maxLength bounds is accepted', async () => {
    const r = await api(lab, 'POST', CRDS, {
      body: other({
        type: 'object',
        properties: {
          names: {
            type: 'array',
            maxItems: 16,
            items: { type: 'string', maxLength: 63 },
            'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }],
          },
        },
      }),
    });
    expect(r.status, r.text).toBe(201);
  });
});
