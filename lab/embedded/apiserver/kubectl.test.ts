// kubectl 1.32 (the machine's real binary, fresh cache dir) against a freshly started API server: discovery,
// apply (client-side and server-side, twice, changed), get in its forms, get all, tables, validation, scale, events.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
const crd = readFileSync(join(import.meta.dirname, 'testdata', 'widget-crd.yaml'), 'utf8');

const app = (replicas: number, value: string, extraLabel = '') => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web${extraLabel}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: example/web:1.0
        ports: [{containerPort: 8080}]
        env: [{name: MODE, value: "${value}"}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo, labels: {app: web}}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo, labels: {app: web}}
data:
  mode: "${value}"
`;

const widget = (size: string, replicas: number) => `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: demo, labels: {tier: gold}}
spec:
  size: ${size}
  replicas: ${replicas}
  ports: [{name: http, port: 80}]
`;

/** A ConfigMap created from JSON (kubectl's generators send protobuf, covered in protobuf.test.ts). */
const cm = (name: string, ns: string, data: Record<string, string> = {}, extra: string[] = []) =>
  lab.k(
    ['create', '-f', '-', ...extra],
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data }),
  );

beforeAll(async () => {
  lab = await startTestLab();
  await lab.k(['create', '-f', '-'], '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"demo"}}');
  await lab.k(['apply', '-f', lab.file('crd.yaml', crd)]);
  await lab.k(['wait', '--for', 'condition=established', '--timeout=20s', 'crd/widgets.example.com']);
});
afterAll(async () => {
  await agent?.close();
  await lab?.stop();
});

let agent: Agent | undefined;
/** A GET straight to the server (no kubectl), with the Accept header given. */
async function get(path: string, accept = 'application/json') {
  agent ??= new Agent({ connect: { ca: lab.server.caPem } });
  const r = await fetch(lab.server.url + path, {
    dispatcher: agent,
    headers: { Authorization: `Bearer ${lab.server.adminToken}`, Accept: accept },
  });
  return { status: r.status, contentType: r.headers.get('content-type') ?? '', json: (await r.json()) as any };
}

/** Paths of the requests kubectl logged at -v=6 or more (`GET https://host:port/path?query`). */
const requested = (stderr: string, method = 'GET') =>
  [...stderr.matchAll(new RegExp(`\\] ${method} (https://\\S+)`, 'g'))].map((m) => new URL(m[1]));

describe('discovery', () => {
  it('api-resources lists built-ins and CRDs with short names and categories', async () => {
    const out = await lab.k(['api-resources']);
    expect(out).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    expect(out).toMatch(/^widgets\s+wd\s+example.com\/v1\s+true\s+Widget$/m);
    expect(out).toMatch(/^customresourcedefinitions\s+crd,crds\s+apiextensions.k8s.io\/v1\s+false/m);
    for (const r of [
      'pods',
      'services',
      'endpoints',
      'configmaps',
      'secrets',
      'serviceaccounts',
      'events',
      'nodes',
      'namespaces',
      'replicasets',
      'endpointslices',
      'leases',
      'roles',
      'rolebindings',
      'clusterroles',
      'clusterrolebindings',
    ])
      expect(out).toMatch(new RegExp(`^${r}\\s`, 'm'));
    const wide = await lab.k(['api-resources', '-o', 'wide', '--api-group=apps']);
    expect(wide).toMatch(/deployments.*create,delete,deletecollection,get,list,patch,update,watch\s+all/);
  });

  it('serves aggregated discovery v2 on /api and /apis: kubectl with an empty cache reads nothing else', async () => {
    // kubectl falls back to the legacy lists silently, so what it prints proves nothing about v2: its request log
    // does. Asked with kubectl 1.32's Accept header (v2, then v2beta1, then plain JSON), the server answers v2 and
    // kubectl needs no per-group-version list.
    const KUBECTL_ACCEPT =
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,' +
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    const r = await lab.kubectl(['api-resources', '-v=8', `--cache-dir=${join(lab.home, 'empty-cache')}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^widgets\s+wd\s+example.com\/v1\s+true\s+Widget$/m);
    expect(requested(r.stderr).map((u) => u.pathname)).toEqual(['/api', '/apis']);
    expect(r.stderr).toContain(`Accept: ${KUBECTL_ACCEPT}`);
    expect(
      r.stderr.match(/Content-Type: application\/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList/g),
    ).toHaveLength(2);

    const core = await get('/api', KUBECTL_ACCEPT);
    const groups = await get('/apis', KUBECTL_ACCEPT);
    for (const d of [core, groups]) {
      expect(d.status).toBe(200);
      expect(d.contentType).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      expect(d.json).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    }
    const resource = (list: any, group: string, name: string) => {
      const g = list.items.find((i: any) => i.metadata.name === group);
      expect(g, group).toBeDefined();
      expect(g.versions[0]).toMatchObject({ version: 'v1', freshness: 'Current' });
      return g.versions[0].resources.find((x: any) => x.resource === name);
    };
    const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
    expect(core.json.items.map((i: any) => i.metadata.name)).toEqual(['']);
    expect(resource(core.json, '', 'pods')).toMatchObject({
      responseKind: { group: '', version: 'v1', kind: 'Pod' },
      scope: 'Namespaced',
      singularResource: 'pod',
      verbs: ALL_VERBS,
      shortNames: ['po'],
      categories: ['all'],
    });
    expect(resource(core.json, '', 'pods').subresources).toContainEqual({
      subresource: 'status',
      responseKind: { group: '', version: 'v1', kind: 'Pod' },
      verbs: ['get', 'patch', 'update'],
    });
    expect(resource(core.json, '', 'namespaces')).toMatchObject({ scope: 'Cluster', shortNames: ['ns'] });
    expect(resource(groups.json, 'apps', 'deployments')).toMatchObject({
      responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ALL_VERBS,
      shortNames: ['deploy'],
      categories: ['all'],
    });
    expect(resource(groups.json, 'apps', 'replicasets').subresources).toContainEqual({
      subresource: 'scale',
      responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      verbs: ['get', 'patch', 'update'],
    });
    expect(resource(groups.json, 'example.com', 'widgets')).toMatchObject({
      responseKind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      scope: 'Namespaced',
      singularResource: 'widget',
      shortNames: ['wd'],
      categories: ['all'],
    });
    expect(resource(groups.json, 'apiextensions.k8s.io', 'customresourcedefinitions')).toMatchObject({
      scope: 'Cluster',
      shortNames: ['crd', 'crds'],
    });

    // v2beta1 when only that is asked for; the legacy documents without a discovery media type.
    const beta = await get('/apis', 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    expect(beta.contentType).toBe('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    expect(beta.json.apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    expect(resource(beta.json, 'example.com', 'widgets').shortNames).toEqual(['wd']);
    expect((await get('/api')).json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const legacyGroups = (await get('/apis')).json;
    expect(legacyGroups.kind).toBe('APIGroupList');
    expect(legacyGroups.groups).toContainEqual(
      expect.objectContaining({
        name: 'example.com',
        preferredVersion: { groupVersion: 'example.com/v1', version: 'v1' },
      }),
    );
    const apps = (await get('/apis/apps/v1')).json;
    expect(apps).toMatchObject({ kind: 'APIResourceList', groupVersion: 'apps/v1' });
    expect(apps.resources).toContainEqual({
      name: 'deployments',
      singularName: 'deployment',
      namespaced: true,
      kind: 'Deployment',
      verbs: ALL_VERBS,
      shortNames: ['deploy'],
      categories: ['all'],
    });
    expect(apps.resources).toContainEqual(
      expect.objectContaining({ name: 'replicasets/scale', group: 'autoscaling', version: 'v1', kind: 'Scale' }),
    );
    const widgets = (await get('/apis/example.com/v1')).json;
    expect(widgets.resources).toContainEqual(
      expect.objectContaining({ name: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all'] }),
    );
    expect((await get('/apis/example.com/v2')).status).toBe(404);
  });

  it('watch responses start at once: kubectl wait on a met condition does not wait for a keep-alive', async () => {
    // client-go treats a watch as established only when its response headers arrive; the keep-alive is every 5 s.
    const t = Date.now();
    await lab.k(['wait', '--for', 'condition=established', '--timeout=20s', 'crd/widgets.example.com']);
    expect(Date.now() - t).toBeLessThan(3000);
  });

  it('kubectl explain lists the fields of built-in kinds and custom resources', async () => {
    const d = await lab.k(['explain', 'deployment.spec.template.spec.containers.ports']);
    expect(d).toMatch(/containerPort\s+<integer>/);
    expect(d).toMatch(/protocol\s+<string>/);
    expect(await lab.k(['explain', 'widget.spec'])).toMatch(/size\s+<string>/);
  });

  it('kubectl version reports the server', async () => {
    const out = await lab.k(['version', '-o', 'json']);
    expect(JSON.parse(out).serverVersion.gitVersion).toMatch(/^v1\.32\./);
  });
});

describe('apply', () => {
  it('client-side apply twice (changed) of a Deployment, Service and ConfigMap', async () => {
    expect(await lab.k(['apply', '-f', lab.file('app1.yaml', app(2, 'a'))])).toMatch(/deployment.apps\/web created/);
    const second = await lab.k(['apply', '-f', lab.file('app2.yaml', app(3, 'b'))]);
    expect(second).toMatch(/deployment.apps\/web configured/);
    expect(second).toMatch(/configmap\/settings configured/);
    expect(second).toMatch(/service\/web unchanged/);
    const d = JSON.parse(await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'json']));
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.containers[0].env).toEqual([{ name: 'MODE', value: 'b' }]);
    expect(d.metadata.generation).toBe(2);
    expect(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain('"replicas":3');
    expect(JSON.parse(await lab.k(['get', 'cm', 'settings', '-n', 'demo', '-o', 'json'])).data).toEqual({ mode: 'b' });
  });

  it('server-side apply twice (changed), with conflicts, force and removal of fields left out', async () => {
    const ssa = (n: number, v: string, extra: string[] = []) =>
      lab.kubectl(['apply', '--server-side', '-f', lab.file(`ssa-${n}-${v}.yaml`, app(n, v)), ...extra]);
    // replicas and env are owned by kubectl-client-side-apply with other values: a conflict.
    const conflict = await ssa(4, 'c');
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toMatch(/conflict with "kubectl-client-side-apply" using apps\/v1: \.spec\.replicas/);
    expect(conflict.stderr).toMatch(/\.spec\.replicas/);
    const forced = await ssa(4, 'c', ['--force-conflicts']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/deployment.apps\/web serverside-applied/);
    const again = await ssa(5, 'd');
    expect(again.code, again.stderr).toBe(0);
    const d = JSON.parse(await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'json', '--show-managed-fields']));
    expect(d.spec.replicas).toBe(5);
    const mgr = d.metadata.managedFields.find((m: any) => m.manager === 'kubectl' && m.operation === 'Apply');
    expect(mgr.fieldsV1['f:spec']['f:replicas']).toEqual({});
    // A label applied before and now left out is removed.
    await lab.k(['apply', '--server-side', '-f', lab.file('ssa-lbl.yaml', app(5, 'd', ', extra: x1'))]);
    expect(JSON.parse(await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'json'])).metadata.labels.extra).toBe(
      'x1',
    );
    await lab.k(['apply', '--server-side', '-f', lab.file('ssa-nolbl.yaml', app(5, 'd'))]);
    expect(
      JSON.parse(await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'json'])).metadata.labels.extra,
    ).toBeUndefined();
  });

  it('client-side and server-side apply of a custom resource, with defaults and status subresource', async () => {
    expect(await lab.k(['apply', '-f', lab.file('w1.yaml', widget('small', 1))])).toMatch(
      /widget.example.com\/w1 created/,
    );
    expect(await lab.k(['apply', '-f', lab.file('w2.yaml', widget('large', 2))])).toMatch(
      /widget.example.com\/w1 configured/,
    );
    let w = JSON.parse(await lab.k(['get', 'widget', 'w1', '-n', 'demo', '-o', 'json']));
    expect(w.spec).toMatchObject({ size: 'large', replicas: 2, color: 'blue' });
    expect(w.metadata.generation).toBe(2);
    const ssa = await lab.kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '-f',
      lab.file('w3.yaml', widget('medium', 3)),
    ]);
    expect(ssa.code, ssa.stderr).toBe(0);
    const ssa2 = await lab.kubectl(['apply', '--server-side', '-f', lab.file('w4.yaml', widget('medium', 4))]);
    expect(ssa2.code, ssa2.stderr).toBe(0);
    w = JSON.parse(await lab.k(['get', 'wd', 'w1', '-n', 'demo', '-o', 'json']));
    expect(w.spec).toMatchObject({ size: 'medium', replicas: 4 });
    // Status only through /status; generation does not move for status writes.
    await lab.k([
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":4,"conditions":[{"type":"Ready","status":"True"}]}}',
    ]);
    await lab.k(['patch', 'widget', 'w1', '-n', 'demo', '--type=merge', '-p', '{"status":{"replicas":99}}']);
    const w2 = JSON.parse(await lab.k(['get', 'wd', 'w1', '-n', 'demo', '-o', 'json']));
    expect(w2.status.replicas).toBe(4);
    expect(w2.metadata.generation).toBe(w.metadata.generation);
    const table = await lab.k(['get', 'widgets', '-n', 'demo']);
    expect(table).toMatch(/^NAME\s+SIZE\s+REPLICAS\s+READY\s+AGE$/m);
    expect(table).toMatch(/^w1\s+medium\s+4\s+True\s+\d+s$/m);
  });
});

describe('get', () => {
  it('-A, -o yaml, -o jsonpath, -l and --field-selector', async () => {
    await cm('other', 'default', { k: 'v' });
    const all = await lab.k(['get', 'configmaps', '-A']);
    expect(all).toMatch(/^NAMESPACE\s+NAME\s+DATA\s+AGE$/m);
    expect(all).toMatch(/^demo\s+settings\s+1\s+/m);
    expect(all).toMatch(/^default\s+other\s+1\s+/m);
    const yaml = await lab.k(['get', 'cm', 'settings', '-n', 'demo', '-o', 'yaml']);
    expect(yaml).toMatch(/^kind: ConfigMap$/m);
    expect(yaml).toMatch(/^ {2}mode: d$/m);
    expect(
      await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'jsonpath={.spec.template.spec.containers[0].image}']),
    ).toBe('example/web:1.0');
    const byLabel = await lab.k(['get', 'cm', '-A', '-l', 'app=web', '-o', 'name']);
    expect(byLabel.trim()).toBe('configmap/settings');
    const byNotIn = await lab.k(['get', 'cm', '-A', '-l', 'app notin (web)', '-o', 'name']);
    expect(byNotIn).toContain('configmap/other');
    const byField = await lab.k([
      'get',
      'cm',
      '-A',
      '--field-selector',
      'metadata.namespace=default,metadata.name!=kube-root-ca.crt',
      '-o',
      'name',
    ]);
    expect(byField.trim().split('\n')).toContain('configmap/other');
    expect(byField).not.toContain('settings');
    const bad = await lab.kubectl(['get', 'cm', '--field-selector', 'spec.nope=1']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/field label not supported: spec.nope/);
  });

  it('get all expands the category', async () => {
    const out = await lab.k(['get', 'all', '-n', 'demo']);
    expect(out).toMatch(/^service\/web\s+LoadBalancer\s+127\.\d+\.\d+\.\d+\s+<pending>\s+80:\d+\/TCP/m);
    expect(out).toMatch(/^deployment.apps\/web\s+0\/5\s+0\s+0\s+/m);
    expect(out).toMatch(/^widget.example.com\/w1\s+medium\s+4/m);
  });

  it('limit/continue pages through lists (kubectl --chunk-size)', async () => {
    for (let i = 0; i < 7; i++) await cm(`page-${i}`, 'demo');
    const names = JSON.parse(await lab.k(['get', 'cm', '-n', 'demo', '-o', 'json'])).items.map(
      (i: any) => `configmap/${i.metadata.name}`,
    );
    expect(names.length).toBeGreaterThanOrEqual(8);
    const r = await lab.kubectl(['get', 'cm', '-n', 'demo', '--chunk-size=2', '-o', 'name', '-v=6']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(names);
    // The pages kubectl asked for (-v=6 logs each request): one GET per 2 objects, each after the first carrying
    // the continue token of the page before. A server that ignored `limit` would answer everything at once.
    const pages = requested(r.stderr).filter((u) => u.pathname === '/api/v1/namespaces/demo/configmaps');
    expect(pages).toHaveLength(Math.ceil(names.length / 2));
    expect(pages.map((u) => u.searchParams.get('limit'))).toEqual(pages.map(() => '2'));
    expect(pages[0].searchParams.has('continue')).toBe(false);
    for (const u of pages.slice(1)) expect(u.searchParams.get('continue')).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(new Set(pages.map((u) => u.searchParams.get('continue'))).size).toBe(pages.length);
  });
});

describe('tables', () => {
  it('pods show the server-computed STATUS, READY and RESTARTS', async () => {
    const pod = (name: string) =>
      `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}","namespace":"demo"},"spec":{"containers":[{"name":"c","image":"x:1"},{"name":"d","image":"x:1"}]}}`;
    for (const n of ['p-wait', 'p-run', 'p-crash', 'p-init']) await lab.k(['create', '-f', '-'], pod(n));
    const status = (n: string, s: unknown) =>
      lab.k([
        'patch',
        'pod',
        n,
        '-n',
        'demo',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: s }),
      ]);
    await status('p-wait', {
      phase: 'Pending',
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 0,
          image: 'x:1',
          imageID: '',
          state: { waiting: { reason: 'ContainerCreating' } },
        },
      ],
    });
    await status('p-run', {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name: 'c',
          ready: true,
          restartCount: 1,
          image: 'x:1',
          imageID: '',
          state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        },
        {
          name: 'd',
          ready: true,
          restartCount: 2,
          image: 'x:1',
          imageID: '',
          state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        },
      ],
    });
    await status('p-crash', {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 5,
          image: 'x:1',
          imageID: '',
          state: { waiting: { reason: 'CrashLoopBackOff' } },
        },
      ],
    });
    const out = await lab.k(['get', 'pods', '-n', 'demo']);
    expect(out).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
    expect(out).toMatch(/^p-wait\s+0\/2\s+ContainerCreating\s+0\s+/m);
    expect(out).toMatch(/^p-run\s+2\/2\s+Running\s+3\s+/m);
    expect(out).toMatch(/^p-crash\s+0\/2\s+CrashLoopBackOff\s+5\s+/m);
    expect(out).toMatch(/^p-init\s+0\/2\s+Pending\s+0\s+/m);
    const wide = await lab.k(['get', 'pods', '-n', 'demo', '-o', 'wide']);
    expect(wide).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/m);
  });

  it('deployments, services and nodes have their usual columns', async () => {
    await lab.k([
      'patch',
      'deploy',
      'web',
      '-n',
      'demo',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":5,"readyReplicas":4,"updatedReplicas":5,"availableReplicas":4}}',
    ]);
    expect(await lab.k(['get', 'deploy', '-n', 'demo'])).toMatch(/^web\s+4\/5\s+5\s+4\s+\d+s$/m);
    await lab.k([
      'patch',
      'svc',
      'web',
      '-n',
      'demo',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"loadBalancer":{"ingress":[{"ip":"127.192.0.1"}]}}}',
    ]);
    expect(await lab.k(['get', 'svc', 'web', '-n', 'demo'])).toMatch(
      /^web\s+LoadBalancer\s+127\.\d+\.\d+\.\d+\s+127\.192\.0\.1\s+80:\d+\/TCP\s+\d+s$/m,
    );
    await lab.k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/control-plane': '' } },
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          nodeInfo: {
            kubeletVersion: 'v1.32.0-gwlab',
            osImage: 'gwlab',
            kernelVersion: '6',
            containerRuntimeVersion: 'gwlab://1',
            machineID: '',
            systemUUID: '',
            bootID: '',
            kubeProxyVersion: '',
            operatingSystem: 'linux',
            architecture: 'amd64',
          },
        },
      }),
    );
    expect(await lab.k(['get', 'nodes', '-o', 'wide'])).toMatch(
      /^node-1\s+Ready\s+control-plane\s+\d+s\s+v1.32.0-gwlab\s+127.0.0.1\s+<none>\s+gwlab\s+6\s+gwlab:\/\/1$/m,
    );
  });

  it('get -w streams a table watch', async () => {
    const w = lab.kubectl(['get', 'cm', '-n', 'demo', '-w', '--request-timeout=4s'], { timeoutMs: 8000 });
    await new Promise((r) => setTimeout(r, 1000));
    await cm('watched', 'demo');
    const r = await w;
    expect(r.stdout).toMatch(/^NAME\s+DATA\s+AGE$/m);
    expect(r.stdout).toMatch(/^watched\s+0\s+/m);
  });
});

describe('validation and errors', () => {
  it('strict validation (kubectl default) rejects unknown and mistyped fields, naming them', async () => {
    const bad = app(1, 'x').replace(
      'image: example/web:1.0',
      'image: example/web:1.0\n        imagePullPolicyy: Always',
    );
    const r = await lab.kubectl([
      'apply',
      '-f',
      lab.file('bad.yaml', bad.replace('name: web\n  namespace', 'name: web2\n  namespace')),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown field "spec.template.spec.containers\[0\].imagePullPolicyy"/);
    const typed = await lab.kubectl(['create', '-f', '-'], {
      input: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed","namespace":"demo"},"data":{"a":1}}',
    });
    expect(typed.code).not.toBe(0);
    expect(typed.stderr).toMatch(/data\.a/);
    const cr = await lab.kubectl([
      'apply',
      '-f',
      lab.file('badw.yaml', widget('small', 1).replace('size: small', 'size: small\n  sizee: big').replace('w1', 'w9')),
    ]);
    expect(cr.code).not.toBe(0);
    expect(cr.stderr).toMatch(/unknown field "spec.sizee"/);
    const enumBad = await lab.kubectl(['apply', '-f', lab.file('badw2.yaml', widget('huge', 1).replace('w1', 'w8'))]);
    expect(enumBad.code).not.toBe(0);
    expect(enumBad.stderr).toMatch(/spec.size: Unsupported value: "huge"/);
  });

  it('dry-run=server writes nothing', async () => {
    const r = await cm('dry', 'demo', {}, ['--dry-run=server', '-o', 'name']);
    expect(r.trim()).toBe('configmap/dry');
    expect((await lab.kubectl(['get', 'cm', 'dry', '-n', 'demo'])).code).not.toBe(0);
  });

  it('scale uses the /scale subresource', async () => {
    expect(await lab.k(['scale', 'deploy/web', '-n', 'demo', '--replicas=7'])).toMatch(/scaled/);
    expect(await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'jsonpath={.spec.replicas}'])).toBe('7');
    await lab.k(['scale', 'widget/w1', '-n', 'demo', '--replicas=6']);
    expect(await lab.k(['get', 'widget', 'w1', '-n', 'demo', '-o', 'jsonpath={.spec.replicas}'])).toBe('6');
  });

  it('generateName and patch types', async () => {
    const out = await lab.k(
      ['create', '-f', '-', '-o', 'name'],
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-","namespace":"demo"}}',
    );
    expect(out.trim()).toMatch(/^configmap\/gen-[a-z0-9]{5}$/);
    await lab.k([
      'patch',
      'deploy',
      'web',
      '-n',
      'demo',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"EXTRA","value":"1"}]}]}}}}',
    ]);
    const env = JSON.parse(
      await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'jsonpath={.spec.template.spec.containers[0].env}']),
    );
    expect(env.map((e: any) => e.name).sort()).toEqual(['EXTRA', 'MODE']);
    await lab.k([
      'patch',
      'deploy',
      'web',
      '-n',
      'demo',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/replicas","value":2}]',
    ]);
    expect(await lab.k(['get', 'deploy', 'web', '-n', 'demo', '-o', 'jsonpath={.spec.replicas}'])).toBe('2');
    const smpOnCr = await lab.kubectl([
      'patch',
      'widget',
      'w1',
      '-n',
      'demo',
      '--type=strategic',
      '-p',
      '{"spec":{"replicas":1}}',
    ]);
    expect(smpOnCr.code).not.toBe(0);
    expect(smpOnCr.stderr).toMatch(/UnsupportedMediaType|unknown format|415|not supported/i);
  });
});

describe('events', () => {
  it('kubectl events and describe show events of an object', async () => {
    const pod = JSON.parse(await lab.k(['get', 'pod', 'p-run', '-n', 'demo', '-o', 'json']));
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'p-run.1', namespace: 'demo' },
      involvedObject: { kind: 'Pod', namespace: 'demo', name: 'p-run', uid: pod.metadata.uid, apiVersion: 'v1' },
      reason: 'Pulled',
      message: 'Container image "x:1" already present on machine',
      type: 'Normal',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: new Date().toISOString().replace(/\.\d+Z/, 'Z'),
      lastTimestamp: new Date().toISOString().replace(/\.\d+Z/, 'Z'),
      count: 1,
    };
    await lab.k(['create', '-f', '-'], JSON.stringify(ev));
    const events = await lab.k(['events', '-n', 'demo', '--for', 'pod/p-run']);
    expect(events).toMatch(/Normal\s+Pulled\s+Pod\/p-run\s+Container image "x:1" already present on machine/);
    const describe = await lab.k(['describe', 'pod', 'p-run', '-n', 'demo']);
    expect(describe).toMatch(/Events:[\s\S]*Normal\s+Pulled\s+\S+\s+kubelet\s+Container image/);
    const get = await lab.k(['get', 'events', '-n', 'demo']);
    expect(get).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
    expect(get).toMatch(/Normal\s+Pulled\s+pod\/p-run\s+Container image/);
  });
});

describe('scale', () => {
  it('kubectl scale rs uses replicasets/scale; GET .../scale is a Scale with the selector as text', async () => {
    await lab.k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'rs1', namespace: 'demo' },
        spec: {
          replicas: 2,
          selector: {
            matchLabels: { tier: 'a', app: 'rs1' },
            matchExpressions: [{ key: 'track', operator: 'In', values: ['stable', 'canary'] }],
          },
          template: {
            metadata: { labels: { app: 'rs1', tier: 'a', track: 'stable' } },
            spec: { containers: [{ name: 'c', image: 'x:1' }] },
          },
        },
      }),
    );
    const r = await lab.kubectl(['scale', 'rs/rs1', '-n', 'demo', '--replicas=4', '-v=6']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/replicaset.apps\/rs1 scaled/);
    expect(requested(r.stderr, 'PATCH').map((u) => u.pathname)).toEqual([
      '/apis/apps/v1/namespaces/demo/replicasets/rs1/scale',
    ]);
    const rs = JSON.parse(await lab.k(['get', 'rs', 'rs1', '-n', 'demo', '-o', 'json']));
    expect(rs.spec.replicas).toBe(4);
    expect(rs.metadata.generation).toBe(2);
    // --current-replicas is checked against the Scale kubectl reads first.
    const stale = await lab.kubectl(['scale', 'rs/rs1', '-n', 'demo', '--current-replicas=3', '--replicas=5']);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toMatch(/Expected replicas to be 3, was 4/);
    await lab.k(['scale', 'rs/rs1', '-n', 'demo', '--current-replicas=4', '--replicas=5']);
    await lab.k([
      'patch',
      'rs',
      'rs1',
      '-n',
      'demo',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":3}}',
    ]);
    const updated = JSON.parse(await lab.k(['get', 'rs', 'rs1', '-n', 'demo', '-o', 'json']));
    const scale = JSON.parse(await lab.k(['get', '--raw', '/apis/apps/v1/namespaces/demo/replicasets/rs1/scale']));
    expect(scale).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'rs1',
        namespace: 'demo',
        uid: updated.metadata.uid,
        resourceVersion: updated.metadata.resourceVersion,
        creationTimestamp: updated.metadata.creationTimestamp,
      },
      spec: { replicas: 5 },
      // Kubernetes' LabelSelectorAsSelector(...).String(): requirements sorted by key, set values sorted.
      status: { replicas: 3, selector: 'app=rs1,tier=a,track in (canary,stable)' },
    });
    // The selector is one kubectl accepts, and it selects the ReplicaSet's pods (here: by the template's labels).
    const pod = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'rs1-pod', namespace: 'demo', labels: { app: 'rs1', tier: 'a', track: 'stable' } },
      spec: { containers: [{ name: 'c', image: 'x:1' }] },
    });
    await lab.k(['create', '-f', '-'], pod);
    expect((await lab.k(['get', 'pods', '-n', 'demo', '-l', scale.status.selector, '-o', 'name'])).trim()).toBe(
      'pod/rs1-pod',
    );
  });
});

describe('custom resource pruning', () => {
  // Fields the Widget schema does not declare are dropped from what is stored, except under spec.extra
  // (x-kubernetes-preserve-unknown-fields: true), whatever its depth.
  const pruned = (name: string) => `
apiVersion: example.com/v1
kind: Widget
metadata: {name: ${name}, namespace: demo}
bogusRoot: 1
spec:
  size: small
  bogus: yes
  ports: [{name: http, port: 80, bogusPort: 1}]
  extra: {anything: {nested: [1, {deep: true}]}, more: x}
`;
  const EXTRA = { anything: { nested: [1, { deep: true }] }, more: 'x' };

  it('kubectl create --validate=false (fieldValidation=Ignore) stores the widget without its unknown fields', async () => {
    const r = await lab.kubectl([
      'create',
      '--validate=false',
      '-f',
      lab.file('pruned.yaml', pruned('pruned')),
      '-v=6',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(requested(r.stderr, 'POST')[0].searchParams.get('fieldValidation')).toBe('Ignore');
    expect(r.stderr).not.toMatch(/Warning/);
    const w = JSON.parse(await lab.k(['get', 'widget', 'pruned', '-n', 'demo', '-o', 'json']));
    expect(w.bogusRoot).toBeUndefined();
    expect(w.spec).toEqual({
      size: 'small',
      replicas: 1,
      color: 'blue',
      ports: [{ name: 'http', port: 80 }],
      extra: EXTRA,
    });
  });

  it('kubectl apply --validate=warn stores it pruned and prints a warning per dropped field; patches are pruned too', async () => {
    const r = await lab.kubectl(['apply', '--validate=warn', '-f', lab.file('pruned2.yaml', pruned('pruned2'))]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of ['bogusRoot', 'spec.bogus', 'spec.ports[0].bogusPort'])
      expect(r.stderr).toContain(`unknown field "${f}"`);
    expect(r.stderr).not.toMatch(/unknown field "spec.extra/);
    const w = JSON.parse(await lab.k(['get', 'widget', 'pruned2', '-n', 'demo', '-o', 'json']));
    expect(Object.keys(w).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(w.spec).toEqual({
      size: 'small',
      replicas: 1,
      color: 'blue',
      ports: [{ name: 'http', port: 80 }],
      extra: EXTRA,
    });
    // A merge patch without fieldValidation (the server's default, Warn) is pruned the same way.
    const p = await lab.kubectl([
      'patch',
      'widget',
      'pruned2',
      '-n',
      'demo',
      '--type=merge',
      '-p',
      '{"spec":{"bogus2":1,"extra":{"added":{"x":[{"y":1}]}}}}',
    ]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).toContain('unknown field "spec.bogus2"');
    const w2 = JSON.parse(await lab.k(['get', 'widget', 'pruned2', '-n', 'demo', '-o', 'json']));
    expect(w2.spec.bogus2).toBeUndefined();
    expect(w2.spec.extra).toEqual({ ...EXTRA, added: { x: [{ y: 1 }] } });
  });
});
