// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding on the embedded API server, end to end over HTTPS
// and with real kubectl: their own field validation (kube-apiserver's pkg/apis/admissionregistration/validation),
// and enforcement as k8s.io/apiserver's policy/validating plugin does it (dispatcher.go, validator.go,
// matching.go): operations, namespace and object selectors, excludeResourceRules, matchConditions, variables,
// message / messageExpression / reason, failurePolicy, Deny / Warn / Audit, params from a ConfigMap by name and by
// selector with parameterNotFoundAction, namespaceObject and request.userInfo. Examples follow
// https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogRegistry } from '../../../../system/shared/log.ts';
import { api, closeApiAgents } from '../testing/requests.ts';
import { startTestLab, type TestLab } from '../testing/test-lab.ts';

const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const CMS = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

let lab: TestLab;
const logLines: string[] = [];
beforeAll(async () => {
  const logRegistry = new LogRegistry({ level: 'info', sink: (l) => logLines.push(l) });
  lab = await startTestLab({ logRegistry });
  for (const [ns, env] of [
    ['vap-prod', 'prod'],
    ['vap-test', 'test'],
  ])
    await api(lab, 'POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { env } } },
    });
});
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

const policy = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name },
  spec: {
    matchConstraints: {
      resourceRules: [
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
      ],
    },
    ...spec,
  },
});
const binding = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name },
  spec: { policyName: name, validationActions: ['Deny'], ...spec },
});
const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

async function install(p: unknown, b: unknown): Promise<void> {
  expect((await api(lab, 'POST', VAP, { body: p })).status).toBe(201);
  expect((await api(lab, 'POST', VAPB, { body: b })).status).toBe(201);
}
async function remove(name: string): Promise<void> {
  await api(lab, 'DELETE', `${VAPB}/${name}`);
  await api(lab, 'DELETE', `${VAP}/${name}`);
}

describe('policy and binding fields are validated as kube-apiserver does', () => {
  it('refuses with 422 naming each field, and stores nothing', async () => {
    const bad = await api(lab, 'POST', VAP, {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'bad' },
        spec: {
          failurePolicy: 'Sometimes',
          validations: [
            { expression: 'object.x ==', message: 'two\nlines', reason: 'Teapot' },
            { expression: 'nope.x == 1 && object.items.all(i, i > 0)' },
          ],
        },
      },
    });
    expect(bad.status).toBe(422);
    const fields = bad.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    expect(fields).toContain('spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"');
    expect(fields).toContain('spec.matchConstraints: Required value');
    expect(
      fields.find((f: string) =>
        f.startsWith('spec.validations[0].expression: Invalid value: "object.x ==": compilation failed:'),
      ),
    ).toBeTruthy();
    expect(fields).toContain(
      'spec.validations[0].message: Invalid value: "two\\nlines": message must not contain line breaks',
    );
    expect(fields).toContain(
      `spec.validations[1].expression: Invalid value: "nope.x == 1 && object.items.all(i, i > 0)": compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')`,
    );
    expect(
      fields.find((f: string) => f.startsWith('spec.validations[0].reason: Unsupported value: "Teapot"')),
    ).toBeTruthy();
    expect((await api(lab, 'GET', `${VAP}/bad`)).status).toBe(404);

    const b = await api(lab, 'POST', VAPB, {
      body: binding('bad', { policyName: '', validationActions: ['Deny', 'Warn', 'Warn'], paramRef: { name: 'x' } }),
    });
    expect(b.status).toBe(422);
    const bf = b.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    expect(bf).toContain('spec.policyName: Required value');
    expect(bf).toContain('spec.validationActions[2]: Duplicate value: "Warn"');
    expect(
      bf.find(
        (f: string) =>
          f.startsWith('spec.validationActions: Invalid value') && f.includes('must not contain both Deny and Warn'),
      ),
    ).toBeTruthy();
    expect(bf).toContain('spec.paramRef.parameterNotFoundAction: Required value');
  });

  it('declares params only with a paramKind, variables only with variables, authorizer not in messageExpressions', async () => {
    const r = await api(lab, 'POST', VAP, {
      body: policy('decl', {
        validations: [
          { expression: 'params.max > 1' },
          { expression: 'variables.x', messageExpression: "authorizer.path('/').check('get').reason()" },
        ],
      }),
    });
    expect(r.status).toBe(422);
    const causes = r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    expect(causes).toContain(
      `spec.validations[0].expression: Invalid value: "params.max > 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')`,
    );
    expect(
      causes.find((c: string) => c.startsWith('spec.validations[1].expression') && c.includes("'variables'")),
    ).toBeTruthy();
    expect(
      causes.find((c: string) => c.startsWith('spec.validations[1].messageExpression') && c.includes("'authorizer'")),
    ).toBeTruthy();
    const b = await api(lab, 'POST', VAPB, {
      body: binding('decl', { paramRef: { parameterNotFoundAction: 'Deny' } }),
    });
    expect(b.status).toBe(422);
    expect(b.json.details.causes.map((c: any) => `${c.field}: ${c.message}`)).toContain(
      'spec.paramRef: Required value: one of name or selector must be specified',
    );
  });

  it('defaults failurePolicy, matchPolicy, selectors and rule scope; kubectl get and describe show them', async () => {
    await install(policy('shown', { validations: [{ expression: 'true' }] }), binding('shown', {}));
    const got = (await api(lab, 'GET', `${VAP}/shown`)).json;
    expect(got.spec.failurePolicy).toBe('Fail');
    expect(got.spec.matchConstraints).toMatchObject({
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
    expect(got.spec.matchConstraints.resourceRules[0].scope).toBe('*');
    expect(await lab.k(['get', 'validatingadmissionpolicy', 'shown'])).toMatch(
      /^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\nshown\s+1\s+<unset>\s+\d+s\n$/,
    );
    expect(await lab.k(['get', 'validatingadmissionpolicybinding', 'shown'])).toMatch(
      /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\nshown\s+shown\s+<unset>\s+\d+s\n$/,
    );
    const described = await lab.k(['describe', 'validatingadmissionpolicy', 'shown']);
    expect(described).toMatch(/Name:\s+shown/);
    expect(described).toMatch(/Failure Policy:\s+Fail/);
    await remove('shown');
  });
});

describe('enforcement', () => {
  it('Deny: the message, messageExpression and reason decide the Status; selectors and excludes decide what is checked', async () => {
    await install(
      policy('small', {
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['configmaps'] }],
          excludeResourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['DELETE'],
              resources: ['configmaps'],
              resourceNames: [],
            },
          ],
          objectSelector: { matchExpressions: [{ key: 'exempt', operator: 'DoesNotExist' }] },
        },
        validations: [
          {
            expression: 'size(object.data) <= 1',
            messageExpression: "'too many keys: ' + string(size(object.data))",
            reason: 'Forbidden',
          },
          { expression: "!('secret' in object.data)" },
        ],
      }),
      binding('small', { matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } }),
    );
    const denied = await api(lab, 'POST', CMS('vap-prod'), { body: cm('two', { a: '1', b: '2' }) });
    expect(denied.status).toBe(403);
    expect(denied.json.reason).toBe('Forbidden');
    expect(denied.json.message).toBe(
      `configmaps "two" is forbidden: ValidatingAdmissionPolicy 'small' with binding 'small' denied request: too many keys: 2`,
    );
    const noMsg = await api(lab, 'POST', CMS('vap-prod'), { body: cm('s', { secret: 'x' }) });
    expect(noMsg.status).toBe(422);
    expect(noMsg.json.reason).toBe('Invalid');
    expect(noMsg.json.message).toContain("denied request: failed expression: !('secret' in object.data)");
    // Other namespace (binding's namespaceSelector), exempt label (policy's objectSelector): admitted.
    expect((await api(lab, 'POST', CMS('vap-test'), { body: cm('two', { a: '1', b: '2' }) })).status).toBe(201);
    expect(
      (await api(lab, 'POST', CMS('vap-prod'), { body: cm('ex', { a: '1', b: '2' }, { exempt: 'y' }) })).status,
    ).toBe(201);
    // Update of an admitted object is checked; dry runs are checked too; nothing is stored.
    expect((await api(lab, 'POST', CMS('vap-prod'), { body: cm('one', { a: '1' }) })).status).toBe(201);
    const upd = await api(lab, 'PUT', `${CMS('vap-prod')}/one`, { body: cm('one', { a: '1', b: '2' }) });
    expect(upd.status).toBe(403);
    expect(
      (await api(lab, 'POST', `${CMS('vap-prod')}?dryRun=All`, { body: cm('dry', { a: '1', b: '2' }) })).status,
    ).toBe(403);
    expect((await api(lab, 'GET', `${CMS('vap-prod')}/one`)).json.data).toEqual({ a: '1' });
    await remove('small');
  });

  it('DELETE is checked with oldObject; request.userInfo and namespaceObject are bound', async () => {
    await install(
      policy('keep', {
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['configmaps'] }],
        },
        validations: [
          {
            expression:
              "object == null && (oldObject.metadata.labels.orEmpty().lock != 'true' || namespaceObject.metadata.labels.env != 'prod')",
            messageExpression: "'user ' + request.userInfo.username + ' may not delete ' + oldObject.metadata.name",
          },
        ],
      }),
      binding('keep', {}),
    );
    // orEmpty() is not CEL: the expression fails to evaluate for every delete: failurePolicy Fail denies.
    expect((await api(lab, 'POST', CMS('vap-prod'), { body: cm('locked', {}, { lock: 'true' }) })).status).toBe(201);
    const err = await api(lab, 'DELETE', `${CMS('vap-prod')}/locked`);
    expect(err.status).toBe(422);
    expect(err.json.message).toContain(
      "denied request: expression 'object == null && (oldObject.metadata.labels.orEmpty()",
    );
    expect(err.json.message).toContain('resulted in error');
    await api(lab, 'PUT', `${VAP}/keep`, {
      body: {
        ...policy('keep', {
          matchConstraints: {
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['configmaps'] },
            ],
          },
          validations: [
            {
              expression:
                "object == null && (!has(oldObject.metadata.labels) || !('lock' in oldObject.metadata.labels) || namespaceObject.metadata.labels.env != 'prod')",
              messageExpression: "'user ' + request.userInfo.username + ' may not delete ' + oldObject.metadata.name",
            },
          ],
        }),
        metadata: {
          name: 'keep',
          resourceVersion: (await api(lab, 'GET', `${VAP}/keep`)).json.metadata.resourceVersion,
        },
      },
    });
    const denied = await api(lab, 'DELETE', `${CMS('vap-prod')}/locked`);
    expect(denied.status).toBe(422);
    expect(denied.json.message).toContain('denied request: user gwlab-admin may not delete locked');
    expect((await api(lab, 'GET', `${CMS('vap-prod')}/locked`)).status).toBe(200);
    expect((await api(lab, 'POST', CMS('vap-prod'), { body: cm('free') })).status).toBe(201);
    expect((await api(lab, 'DELETE', `${CMS('vap-prod')}/free`)).status).toBe(200);
    await remove('keep');
    expect((await api(lab, 'DELETE', `${CMS('vap-prod')}/locked`)).status).toBe(200);
  });

  it('matchConditions select requests; variables feed validations; failurePolicy Ignore admits on errors', async () => {
    await install(
      policy('vars', {
        failurePolicy: 'Ignore',
        matchConditions: [
          { name: 'only-app', expression: "has(object.metadata.labels) && 'app' in object.metadata.labels" },
        ],
        variables: [
          { name: 'app', expression: 'object.metadata.labels.app' },
          { name: 'prefixed', expression: "variables.app.startsWith('team-')" },
        ],
        validations: [
          { expression: 'variables.prefixed', message: 'app label must start with team-' },
          { expression: 'object.data.n.size() < 3' },
        ],
      }),
      binding('vars', {}),
    );
    // No app label: the match condition is false, so `object.data.n.size() < 3` (false here) is not evaluated.
    expect((await api(lab, 'POST', CMS('vap-test'), { body: cm('nolabel', { n: 'long' }) })).status).toBe(201);
    const bad = await api(lab, 'POST', CMS('vap-test'), { body: cm('badapp', { n: '1' }, { app: 'web' }) });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toContain('denied request: app label must start with team-');
    // `object.data.n` is missing: an evaluation error, ignored by failurePolicy Ignore.
    expect((await api(lab, 'POST', CMS('vap-test'), { body: cm('goodapp', {}, { app: 'team-web' }) })).status).toBe(
      201,
    );
    await remove('vars');
  });

  it('a match condition that fails to evaluate denies under failurePolicy Fail, with the expression named', async () => {
    await install(
      policy('mc-fail', {
        matchConditions: [{ name: 'flag', expression: "object.data.flag == 'on'" }],
        validations: [{ expression: 'false', message: 'flagged' }],
      }),
      binding('mc-fail', {}),
    );
    const r = await api(lab, 'POST', CMS('vap-test'), { body: cm('noflag') });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain(
      "ValidatingAdmissionPolicy 'mc-fail' with binding 'mc-fail' denied request: expression 'object.data.flag == 'on'' resulted in error:",
    );
    expect((await api(lab, 'POST', CMS('vap-test'), { body: cm('off', { flag: 'off' }) })).status).toBe(201);
    const on = await api(lab, 'POST', CMS('vap-test'), { body: cm('on', { flag: 'on' }) });
    expect(on.json.message).toContain('denied request: flagged');
    await remove('mc-fail');
  });

  it('Warn returns a Warning header; Audit writes the validation_failure annotation to the log; both admit', async () => {
    await install(
      policy('soft', { validations: [{ expression: "object.metadata.name != 'flagged'", message: 'flagged name' }] }),
      binding('soft', { validationActions: ['Warn', 'Audit'] }),
    );
    const r = await lab.kubectl(['create', 'configmap', 'flagged', '-n', 'vap-test']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "Warning: Validation failed for ValidatingAdmissionPolicy 'soft' with binding 'soft': flagged name",
    );
    const line = logLines.find((l) => l.includes('validation.policy.admission.k8s.io/validation_failure'));
    expect(line).toBeTruthy();
    expect(JSON.parse(JSON.parse(line!)['validation.policy.admission.k8s.io/validation_failure'])).toEqual([
      {
        message: 'flagged name',
        policy: 'soft',
        binding: 'soft',
        expressionIndex: 0,
        validationActions: ['Warn', 'Audit'],
      },
    ]);
    await remove('soft');
  });

  it('params: a ConfigMap by name or by selector; parameterNotFoundAction Deny and Allow', async () => {
    await install(
      policy('limits', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
          ],
        },
        validations: [
          {
            expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
            messageExpression: "'replicas must be at most ' + params.data.maxReplicas",
          },
        ],
      }),
      binding('limits', {
        paramRef: { name: 'replica-limit', namespace: 'vap-test', parameterNotFoundAction: 'Deny' },
      }),
    );
    const deploy = (name: string, replicas: number) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const DEPLOY = '/apis/apps/v1/namespaces/vap-prod/deployments';
    const missing = await api(lab, 'POST', DEPLOY, { body: deploy('a', 3) });
    expect(missing.status).toBe(422);
    expect(missing.json.message).toContain(
      "ValidatingAdmissionPolicy 'limits' with binding 'limits' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    await api(lab, 'POST', CMS('vap-test'), { body: cm('replica-limit', { maxReplicas: '2' }) });
    const over = await api(lab, 'POST', DEPLOY, { body: deploy('a', 3) });
    expect(over.status).toBe(422);
    expect(over.json.message).toContain('denied request: replicas must be at most 2');
    expect((await api(lab, 'POST', DEPLOY, { body: deploy('b', 2) })).status).toBe(201);
    // By selector, in the request's namespace; none found with Allow: admitted.
    const b = (await api(lab, 'GET', `${VAPB}/limits`)).json;
    b.spec.paramRef = { selector: { matchLabels: { kind: 'limit' } }, parameterNotFoundAction: 'Allow' };
    expect((await api(lab, 'PUT', `${VAPB}/limits`, { body: b })).status).toBe(200);
    expect((await api(lab, 'POST', DEPLOY, { body: deploy('c', 9) })).status).toBe(201);
    await api(lab, 'POST', CMS('vap-prod'), { body: cm('lim', { maxReplicas: '4' }, { kind: 'limit' }) });
    const sel = await api(lab, 'POST', DEPLOY, { body: deploy('d', 5) });
    expect(sel.status).toBe(422);
    expect(sel.json.message).toContain('replicas must be at most 4');
    expect(await lab.k(['get', 'validatingadmissionpolicy', 'limits', '--no-headers'])).toMatch(
      /^limits\s+1\s+v1\/ConfigMap\s+/,
    );
    expect(await lab.k(['get', 'validatingadmissionpolicybinding', 'limits', '--no-headers'])).toMatch(
      /^limits\s+limits\s+kind=limit\s+/,
    );
    await remove('limits');
  });
});

describe('matchPolicy', () => {
  it('Equivalent also matches the same resource through another served version; Exact does not', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.vap.example.com' },
      spec: {
        group: 'vap.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: ['v1', 'v1beta1'].map((name) => ({
          name,
          served: true,
          storage: name === 'v1',
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
            },
          },
        })),
      },
    };
    expect(
      (await api(lab, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status,
    ).toBe(201);
    await install(
      policy('widgets', {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['vap.example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] },
          ],
        },
        validations: [{ expression: 'object.spec.size < 10', message: 'too big' }],
      }),
      binding('widgets', {}),
    );
    const widget = (v: string, name: string) => ({
      apiVersion: `vap.example.com/${v}`,
      kind: 'Widget',
      metadata: { name },
      spec: { size: 20 },
    });
    const path = (v: string) => `/apis/vap.example.com/${v}/namespaces/vap-test/widgets`;
    expect((await api(lab, 'POST', path('v1'), { body: widget('v1', 'a') })).status).toBe(422);
    const beta = await api(lab, 'POST', path('v1beta1'), { body: widget('v1beta1', 'b') });
    expect(beta.status).toBe(422);
    expect(beta.json.message).toBe(
      `widgets.vap.example.com "b" is forbidden: ValidatingAdmissionPolicy 'widgets' with binding 'widgets' denied request: too big`,
    );
    const p = (await api(lab, 'GET', `${VAP}/widgets`)).json;
    p.spec.matchConstraints.matchPolicy = 'Exact';
    expect((await api(lab, 'PUT', `${VAP}/widgets`, { body: p })).status).toBe(200);
    expect((await api(lab, 'POST', path('v1beta1'), { body: widget('v1beta1', 'c') })).status).toBe(201);
    expect((await api(lab, 'POST', path('v1'), { body: widget('v1', 'd') })).status).toBe(422);
    await remove('widgets');
  });
});

describe('auditAnnotations', () => {
  it('are validated, published as <policy>/<key> in the log, and deny on a wrong type under failurePolicy Fail', async () => {
    const invalid = await api(lab, 'POST', VAP, {
      body: policy('ann-bad', {
        auditAnnotations: [
          { key: 'a b', valueExpression: "'x'" },
          { key: 'k', valueExpression: ' ' },
        ],
      }),
    });
    expect(invalid.status).toBe(422);
    const causes = invalid.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    expect(
      causes.find((c: string) => c.startsWith('spec.auditAnnotations[0].key: Invalid value: "ann-bad/a b"')),
    ).toBeTruthy();
    expect(causes).toContain(
      'spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified',
    );

    await install(
      policy('ann', {
        auditAnnotations: [
          { key: 'keys', valueExpression: "'keys: ' + string(size(object.data))" },
          { key: 'skipped', valueExpression: 'null' },
        ],
      }),
      binding('ann', { validationActions: ['Audit'] }),
    );
    expect((await api(lab, 'POST', CMS('vap-test'), { body: cm('annotated', { a: '1', b: '2' }) })).status).toBe(201);
    const line = logLines.find((l) => l.includes('validation policy audit annotations') && l.includes('annotated'));
    expect(JSON.parse(line!).annotations).toEqual({ 'ann/keys': 'keys: 2' });

    const p = (await api(lab, 'GET', `${VAP}/ann`)).json;
    p.spec.auditAnnotations = [{ key: 'count', valueExpression: 'size(object.data)' }];
    expect((await api(lab, 'PUT', `${VAP}/ann`, { body: p })).status).toBe(200);
    const denied = await api(lab, 'POST', CMS('vap-test'), { body: cm('counted', { a: '1' }) });
    expect(denied.status).toBe(422);
    expect(denied.json.message).toContain(
      "ValidatingAdmissionPolicy 'ann' with binding 'ann' denied request: valueExpression 'size(object.data)' resulted in unsupported return type: int. Return type must be either string or null.",
    );
    await remove('ann');
  });
});

describe('status.typeChecking', () => {
  it('names undefined fields of the kinds the rules name, with cel-go-style positions; wildcards are not checked', async () => {
    const typo = policy('typo', {
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
        ],
      },
      validations: [
        { expression: 'object.spec.replicass <= 5' },
        { expression: "object.spec.replicas <= 5 && has(object.metadata.labels) && object.metadata.name != ''" },
      ],
    });
    expect((await api(lab, 'POST', VAP, { body: typo })).status).toBe(201);
    const got = (await api(lab, 'GET', `${VAP}/typo`)).json;
    expect(got.metadata.generation).toBe(1);
    expect(got.status).toEqual({
      observedGeneration: 1,
      typeChecking: {
        expressionWarnings: [
          {
            fieldRef: 'spec.validations[0].expression',
            warning:
              "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass <= 5\n | ...........^\n",
          },
        ],
      },
    });
    got.spec.validations = [{ expression: 'object.spec.replicas <= 5' }];
    expect((await api(lab, 'PUT', `${VAP}/typo`, { body: got })).status).toBe(200);
    expect((await api(lab, 'GET', `${VAP}/typo`)).json.status).toEqual({ observedGeneration: 2, typeChecking: {} });
    const wild = policy('wild', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['*'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }],
      },
      validations: [{ expression: 'object.spec.replicass <= 5' }],
    });
    expect((await api(lab, 'POST', VAP, { body: wild })).status).toBe(201);
    expect((await api(lab, 'GET', `${VAP}/wild`)).json.status.typeChecking).toEqual({});
    await api(lab, 'DELETE', `${VAP}/typo`);
    await api(lab, 'DELETE', `${VAP}/wild`);
  });
});

describe('params from a custom resource', () => {
  it('a cluster-scoped CR by name; a namespace on its paramRef is a configuration error', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'limits.vap.example.com' },
      spec: {
        group: 'vap.example.com',
        scope: 'Cluster',
        names: { plural: 'limits', singular: 'limit', kind: 'Limit', listKind: 'LimitList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { maxKeys: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    };
    expect(
      (await api(lab, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status,
    ).toBe(201);
    await api(lab, 'POST', '/apis/vap.example.com/v1/limits', {
      body: { apiVersion: 'vap.example.com/v1', kind: 'Limit', metadata: { name: 'global' }, spec: { maxKeys: 1 } },
    });
    await install(
      policy('crparams', {
        paramKind: { apiVersion: 'vap.example.com/v1', kind: 'Limit' },
        validations: [
          {
            expression: 'size(object.data) <= params.spec.maxKeys',
            messageExpression:
              "'at most ' + string(params.spec.maxKeys) + ' keys (' + params.kind + ' ' + params.metadata.name + ')'",
          },
        ],
      }),
      binding('crparams', { paramRef: { name: 'global', parameterNotFoundAction: 'Deny' } }),
    );
    const denied = await api(lab, 'POST', CMS('vap-test'), { body: cm('crp', { a: '1', b: '2' }) });
    expect(denied.status).toBe(422);
    expect(denied.json.message).toContain('denied request: at most 1 keys (Limit global)');
    expect((await api(lab, 'POST', CMS('vap-test'), { body: cm('crp', { a: '1' }) })).status).toBe(201);
    const b = (await api(lab, 'GET', `${VAPB}/crparams`)).json;
    b.spec.paramRef.namespace = 'vap-test';
    expect((await api(lab, 'PUT', `${VAPB}/crparams`, { body: b })).status).toBe(200);
    const conf = await api(lab, 'POST', CMS('vap-test'), { body: cm('crp2') });
    expect(conf.status).toBe(422);
    expect(conf.json.message).toContain(
      'denied request: failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`',
    );
    await remove('crparams');
  });
});

describe('authorizer', () => {
  it("checks the requester's (or a service account's) RBAC permissions, and the request's own resource", async () => {
    const ns = 'vap-test';
    await api(lab, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'writer' } },
    });
    await api(lab, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'cm-writer' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }],
      },
    });
    await api(lab, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'cm-writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-writer' },
        subjects: [{ kind: 'ServiceAccount', name: 'writer', namespace: ns }],
      },
    });
    await install(
      policy('authz', {
        validations: [
          {
            expression:
              "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()",
            messageExpression: "request.userInfo.username + ' may not read secrets'",
          },
          { expression: "authorizer.requestResource.check('create').allowed()" },
          {
            expression:
              "!authorizer.serviceAccount('vap-test', 'writer').group('').resource('secrets').check('get').allowed() && authorizer.serviceAccount('vap-test', 'writer').group('').resource('configmaps').namespace('vap-test').name('x').check('get').allowed()",
          },
          {
            expression:
              "authorizer.path('/healthz').check('get').reason() == '' && !authorizer.path('/healthz').check('get').errored()",
          },
        ],
      }),
      binding('authz', {}),
    );
    expect((await api(lab, 'POST', CMS(ns), { body: cm('by-admin') })).status).toBe(201);
    const token = lab.server.issueServiceAccountToken(ns, 'writer');
    const sa = await api(lab, 'POST', CMS(ns), { body: cm('by-sa'), token });
    expect(sa.status).toBe(422);
    expect(sa.json.message).toContain(
      "ValidatingAdmissionPolicy 'authz' with binding 'authz' denied request: system:serviceaccount:vap-test:writer may not read secrets",
    );
    await remove('authz');
    const after = await api(lab, 'POST', CMS(ns), { body: cm('by-sa'), token });
    expect(after.status).toBe(201);
  });
});
