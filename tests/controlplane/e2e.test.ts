// End to end: the embedded API server, the control plane (informers, deployer, statuses, xDS) and a real proxy process
// started from the bootstrap the deployer wrote (its xDS cluster pointed at this control plane), with sample apps as
// backends (EndpointSlices point at them). HTTP through the proxy checks each Gateway API behaviour, the policy rules of
// contract section 7, and both sides of the validation switch. It needs lab/ for the API server, hence this folder
// outside system/ (what goes into the image).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { PROJECT_CRD_COUNT, projectCrdsJson } from '../../lab/testing/crds.ts';
import { ControlPlane } from '../../system/controlplane/controlplane.ts';
import {
  freePort,
  type HttpResult,
  httpRequest,
  type ProxyProcess,
  spawnProxy,
  until,
} from '../../system/controlplane/testing/control-plane.ts';
import { type ExtAuth, startExtAuth } from '../../system/extauth/server.ts';
import { type SampleApp, startSampleApp } from '../../system/sampleapp/server.ts';
import { LogRegistry } from '../../system/shared/log.ts';

const MANIFESTS = new URL('../../system/manifests/', import.meta.url).pathname;
const ROLE = 'gwvendor-kube-gateway-api~gwvendor-system~e2e';

let lab: TestLab;
let cp: ControlPlane;
let proxy: ProxyProcess | undefined;
let dir: string;
let kc: KubeConfig;
let xdsPort: number;
let port: number; // the Gateway listener's port, bound by the proxy
let port2: number; // a second port with hostname-specific listeners
const apps: Record<string, SampleApp> = {};
const hits: Record<string, { uri: string; host?: string }[]> = {};
let extauth: ExtAuth;
const cpLogs: string[] = [];

function logs(): LogRegistry {
  return new LogRegistry({
    level: 'debug',
    sink: (l) => {
      cpLogs.push(l);
      if (process.env.GWVENDOR_TEST_LOG) process.stderr.write(l + '\n');
    },
  });
}

function controlPlane(validation: 'strict' | 'off'): ControlPlane {
  return new ControlPlane({
    validation,
    logs: logs(),
    kubeConfig: kc,
    xdsHost: '127.0.0.1',
    xdsPort,
    adminPort: 0,
    deployer: { proxyImage: 'gwlab.local/system:0.1.0', xdsHost: '127.0.0.1', xdsPort },
  });
}

const service = (ns: string, name: string, p: number) => `
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec: {ports: [{name: http, port: ${p}, targetPort: 8080}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}-1, namespace: ${ns}, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
ports: [{name: http, port: __PORT_${name}__}]
`;

const tag = (value: string) =>
  `{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-rule, value: ${value}}]}}`;

function routes(): string {
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: basic, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [www.example.com]
  rules: [{backendRefs: [{name: v1, port: 8000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [match.example.com]
  rules:
    - {matches: [{path: {type: PathPrefix, value: /}}], filters: [${tag('default')}], backendRefs: [{name: v1, port: 8000}]}
    - {matches: [{path: {type: Exact, value: /anything/exact}}], filters: [${tag('exact')}], backendRefs: [{name: v2, port: 8000}]}
    - {matches: [{path: {type: PathPrefix, value: /anything/api}}], filters: [${tag('prefix')}], backendRefs: [{name: v1, port: 8000}]}
    - {matches: [{path: {type: PathPrefix, value: /anything/api}, headers: [{name: x-version, value: "2"}]}], filters: [${tag('header')}], backendRefs: [{name: v2, port: 8000}]}
    - {matches: [{path: {type: PathPrefix, value: /anything/api}, queryParams: [{name: debug, value: "1"}]}], filters: [${tag('query')}], backendRefs: [{name: v2, port: 8000}]}
    - {matches: [{path: {type: PathPrefix, value: /anything/api}, method: POST}], filters: [${tag('method')}], backendRefs: [{name: v2, port: 8000}]}
    - {matches: [{path: {type: RegularExpression, value: "/anything/items/[0-9]+"}}], filters: [${tag('regex')}], backendRefs: [{name: v2, port: 8000}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: filters, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [filters.example.com]
  rules:
    - matches: [{path: {value: /headers}}]
      filters:
        - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Set, value: set}], add: [{name: X-Add, value: added}], remove: [X-Remove]}}
        - {type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: X-Resp, value: "1"}], remove: [access-control-allow-credentials]}}
      backendRefs: [{name: v1, port: 8000}]
    - matches: [{path: {value: /old}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: moved.example.com, path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}, statusCode: 301}}]
    - matches: [{path: {value: /strip}}]
      filters: [{type: URLRewrite, urlRewrite: {hostname: rewritten.example.com, path: {type: ReplacePrefixMatch, replacePrefixMatch: /anything}}}]
      backendRefs: [{name: v1, port: 8000}]
    - matches: [{path: {value: /anything/mirror}}]
      filters: [{type: RequestMirror, requestMirror: {backendRef: {name: v3, port: 8000}}}]
      backendRefs: [{name: v1, port: 8000}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: weights, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [weights.example.com]
  rules: [{backendRefs: [{name: v1, port: 8000, weight: 80}, {name: v2, port: 8000, weight: 20}, {name: v3, port: 8000, weight: 0}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: refs, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [refs.example.com]
  rules:
    - {matches: [{path: {value: /anything/granted}}], backendRefs: [{name: shared, namespace: granted, port: 8000}]}
    - {matches: [{path: {value: /anything/denied}}], backendRefs: [{name: shared, namespace: denied, port: 8000}]}
    - {matches: [{path: {value: /anything/missing}}], backendRefs: [{name: nothere, port: 8000}]}
    - {matches: [{path: {value: /anything/kind}}], backendRefs: [{group: example.com, kind: Bucket, name: b}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: slow, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [slow.example.com]
  rules:
    - {matches: [{path: {value: /delay}}], timeouts: {request: 300ms}, backendRefs: [{name: v1, port: 8000}]}
    - {matches: [{path: {type: Exact, value: /delay/2}}], timeouts: {request: 10s, backendRequest: 300ms}, backendRefs: [{name: v1, port: 8000}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: policies, namespace: apps, labels: {policy: "yes"}}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [policy.example.com]
  rules: [{backendRefs: [{name: v1, port: 8000}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: apps-routes, namespace: granted}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: apps}]
  to: [{group: "", kind: Service}]
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: oldest, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: policies}]
  headerModifiers: {response: {set: [{name: x-policy, value: oldest}]}}
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: nomatch, namespace: apps}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {policy: "no"}}]
  faultInjection: {abort: {httpStatus: 418}}
`;
}

const NEWER_POLICY = `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: newest, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: policies}]
  headerModifiers: {response: {set: [{name: x-policy, value: newest}]}}
`;

const EXT_AUTH = (withGrant: boolean) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: auth, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [auth.example.com]
  rules: [{backendRefs: [{name: v1, port: 8000}]}]
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayExtension
metadata: {name: ext-auth, namespace: apps}
spec:
  extAuth: {httpService: {backendRef: {name: extauth, namespace: extauth, port: 9000}}}
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: auth, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: auth}]
  extAuth: {extensionRef: {name: ext-auth}}
${
  withGrant
    ? `---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: gateway-extensions, namespace: extauth}
spec:
  from: [{group: gateway.gwvendor.dev, kind: GatewayExtension, namespace: apps}]
  to: [{group: "", kind: Service}]`
    : ''
}`;

async function getJson(args: string[]): Promise<any> {
  return JSON.parse(await lab.k([...args, '-o', 'json']));
}
const admin = async (path: string) => (await fetch(cp.admin!.url + path)).json() as Promise<any>;
const req = (host: string, path: string, o: { method?: string; headers?: Record<string, string> } = {}) =>
  httpRequest(port, path, { host, ...o });

/** Conformance-style: the expectation must hold 3 times in a row (config is eventually consistent). */
async function eventually(
  what: string,
  host: string,
  path: string,
  check: (r: HttpResult) => boolean,
  o = {},
): Promise<HttpResult> {
  let streak = 0;
  let last: HttpResult | undefined;
  try {
    return await until(
      what,
      async () => {
        last = await req(host, path, o);
        streak = check(last) ? streak + 1 : 0;
        return streak >= 3 ? last : undefined;
      },
      20_000,
      30,
    );
  } catch (err) {
    throw new Error(
      `${(err as Error).message}; last answer: ${last?.status} ${JSON.stringify(last?.headers)} ${last?.body.slice(0, 300)}`,
    );
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gwvendor-e2e-'));
  xdsPort = await freePort();
  port = await freePort();
  port2 = await freePort();
  for (const name of ['v1', 'v2', 'v3', 'shared', 'denied']) {
    hits[name] = [];
    apps[name] = await startSampleApp({ accessLog: (l) => hits[name].push(JSON.parse(l)) });
  }
  extauth = await startExtAuth({ log: false });
  lab = await startTestLab({ labName: 'cp-e2e' });
  kc = await (lab.server.kubeConfig() as unknown as Promise<KubeConfig>);
  await lab.k(['apply', '--server-side', '-f', '-'], projectCrdsJson());
  await until('CRDs established', async () => {
    const list = await getJson(['get', 'crd']);
    return list.items.length === PROJECT_CRD_COUNT &&
      list.items.every((c: any) =>
        c.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True'),
      )
      ? true
      : undefined;
  });
  await lab.k(['apply', '-f', `${MANIFESTS}install/gwvendor.yaml`]);
  const ns = [
    ...['apps', 'granted', 'denied', 'extauth'].map((n) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${n}}`),
    'apiVersion: v1\nkind: Namespace\nmetadata: {name: team, labels: {gw-access: "yes"}}',
  ].join('\n---\n');
  let svcs = [
    service('apps', 'v1', 8000),
    service('apps', 'v2', 8000),
    service('apps', 'v3', 8000),
    service('granted', 'shared', 8000),
    service('denied', 'shared', 8000),
    service('extauth', 'extauth', 9000),
    service('gwvendor-system', 'local', 8000),
    service('team', 'web', 8000),
  ].join('---\n');
  svcs = svcs
    .replace(/__PORT_v1__/, String(apps.v1.port))
    .replace(/__PORT_v2__/, String(apps.v2.port))
    .replace(/__PORT_v3__/, String(apps.v3.port))
    .replace(/__PORT_shared__/, String(apps.shared.port))
    .replace(/__PORT_shared__/, String(apps.denied.port))
    .replace(/__PORT_extauth__/, String(extauth.port))
    .replace(/__PORT_local__/, String(apps.v1.port))
    .replace(/__PORT_web__/, String(apps.v2.port));
  await lab.k(['apply', '-f', '-'], `${ns}\n---\n${svcs}`);
  cp = controlPlane('strict');
  await cp.start();
}, 120_000);

afterAll(async () => {
  if (process.env.GWVENDOR_TEST_LOG) process.stderr.write(`--- proxy output ---\n${proxy?.output.join('\n')}\n`);
  await proxy?.stop();
  await cp?.stop();
  await lab?.stop();
  await Promise.all(Object.values(apps).map((a) => a.close()));
  await extauth?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('control plane and proxy, end to end', () => {
  it('/snapshots/xds is empty before the Gateway exists', async () => {
    await until('synced', async () => (cp.synced() ? true : undefined));
    const x = await admin('/snapshots/xds');
    expect(x.data).toEqual({});
    expect(x.reason).toMatch(/no Gateway of class gwvendor has produced a snapshot/);
  });

  it('the Gateway gets a proxy, which connects: /snapshots/xds has it, /snapshots/krt holds the resources, synced', async () => {
    await lab.k(
      ['apply', '-f', '-'],
      `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: e2e, namespace: gwvendor-system}
spec:
  gatewayClassName: gwvendor
  listeners:
    - {name: http, protocol: HTTP, port: ${port}, allowedRoutes: {namespaces: {from: All}}}
    - {name: wild, protocol: HTTP, port: ${port2}, hostname: "*.wild.example.com"}
    - name: sel
      protocol: HTTP
      port: ${port2}
      hostname: sel.example.com
      allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {gw-access: "yes"}}}}
---
${routes()}`,
    );
    // The deployer wrote the bootstrap; the pod would mount it. Here the proxy runs as a plain process.
    const cm = await until('the proxy ConfigMap', async () =>
      getJson(['-n', 'gwvendor-system', 'get', 'configmap', 'e2e']),
    ).catch((err) => {
      // What the control plane saw, for the record.
      const seen = cp.pipeline.gatewaysIn.keys().join(', ') || 'none';
      const wanted = cp.deployer?.desired.keys().join(', ') || 'nothing';
      throw new Error(`${(err as Error).message}; Gateways seen: ${seen}; deployer wants: ${wanted}`);
    });
    proxy = await spawnProxy(cm.data['envoy.yaml'], { serviceNode: 'e2e-abc.gwvendor-system', dir });
    const entry = await until('the proxy in /snapshots/xds, all types ACKed', async () => {
      const x = await admin('/snapshots/xds');
      const p = x.data[ROLE]?.proxies?.['e2e-abc.gwvendor-system'];
      return p && ['clusters', 'endpoints', 'listeners', 'routes'].every((t) => p.types[t]?.status === 'ACKED')
        ? x.data[ROLE]
        : undefined;
    });
    expect(entry.listeners.map((l: any) => l.name).sort()).toEqual([`listener~${port}`, `listener~${port2}`].sort());
    expect(entry.clusters.map((c: any) => c.name)).toContain('kube_apps_v1_8000');
    const krt = (await admin('/snapshots/krt')) as any[];
    expect(krt.every((c) => c.state.synced)).toBe(true);
    const routesColl = krt.find((c) => c.name === 'HTTPRoutes');
    expect(Object.keys(routesColl.state.outputs)).toEqual(
      expect.arrayContaining(['apps/basic', 'apps/matching', 'apps/filters']),
    );
    // The proxy's own config_dump holds the same listener.
    const dump = (await (await fetch(`${proxy.adminUrl}/config_dump`)).json()) as any;
    expect(JSON.stringify(dump)).toContain(`listener~${port}`);
  });

  it('routes by host, with or without :port in the Host header, and answers 404 for an unknown host', async () => {
    const r = await eventually('basic 200', 'www.example.com', '/headers', (x) => x.status === 200);
    expect(r.json().headers.Host).toEqual(['www.example.com']);
    expect(r.headers['content-type']).toContain('application/json');
    expect((await req(`www.example.com:${port}`, '/headers')).status).toBe(200);
    expect((await req('nope.example.com', '/headers')).status).toBe(404);
  });

  it('listeners: hostname intersection, allowedRoutes (Same, Selector) and parentRef sectionName/port', async () => {
    await lab.k(
      ['apply', '-f', '-'],
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild-same, namespace: gwvendor-system}
spec:
  parentRefs: [{name: e2e, sectionName: wild}]
  hostnames: [a.wild.example.com, other.example.org]
  rules: [{backendRefs: [{name: local, port: 8000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild-other-ns, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system, sectionName: wild}]
  hostnames: [b.wild.example.com]
  rules: [{backendRefs: [{name: v1, port: 8000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: by-port, namespace: team}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system, port: ${port2}}]
  rules: [{backendRefs: [{name: web, port: 8000}]}]
---
# Two parentRefs to one Gateway must differ by sectionName (the v1.6.1 CRD's CEL rules), so the ref that matches no
# listener has a route of its own.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: no-listener, namespace: team}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system, sectionName: nope}]
  rules: [{backendRefs: [{name: web, port: 8000}]}]`,
    );
    const on2 = (host: string, check: (r: HttpResult) => boolean) =>
      until(`${host} on the second port`, async () => {
        const r = await httpRequest(port2, '/get', { host });
        return check(r) ? r : undefined;
      });
    await on2('a.wild.example.com', (r) => r.status === 200 && r.json().headers.Host[0] === 'a.wild.example.com');
    // other.example.org does not intersect *.wild.example.com; the apps route is not allowed (Same namespace only).
    expect((await httpRequest(port2, '/get', { host: 'other.example.org' })).status).toBe(404);
    expect((await httpRequest(port2, '/get', { host: 'b.wild.example.com' })).status).toBe(404);
    // by port: the selected listener takes the team namespace, with its own hostname; the wildcard one does not.
    await on2('sel.example.com', (r) => r.status === 200);
    expect((await httpRequest(port2, '/get', { host: 'c.wild.example.com' })).status).toBe(404);
    const parents = async (ns: string, name: string) =>
      until(`${ns}/${name} status`, async () => {
        const o = await getJson(['-n', ns, 'get', 'httproute', name]);
        return o.status?.parents?.length ? o.status.parents : undefined;
      });
    const accepted = (p: any) => p.conditions.find((c: any) => c.type === 'Accepted');
    expect(accepted((await parents('gwvendor-system', 'wild-same'))[0])).toMatchObject({ status: 'True' });
    expect(accepted((await parents('apps', 'wild-other-ns'))[0])).toMatchObject({
      status: 'False',
      reason: 'NotAllowedByListeners',
    });
    const byPort = await parents('team', 'by-port');
    expect(byPort.map((p: any) => [accepted(p).status, accepted(p).reason])).toEqual([['True', 'Accepted']]);
    const noListener = await parents('team', 'no-listener');
    expect(noListener.map((p: any) => [accepted(p).status, accepted(p).reason])).toEqual([
      ['False', 'NoMatchingParent'],
    ]);
    const gw = await getJson(['-n', 'gwvendor-system', 'get', 'gateway', 'e2e']);
    const attached = Object.fromEntries(gw.status.listeners.map((l: any) => [l.name, l.attachedRoutes]));
    expect(attached.wild).toBe(1);
    expect(attached.sel).toBe(1);
  });

  it('path, header, query and method matches follow the spec precedence', async () => {
    const rule = async (path: string, o: { method?: string; headers?: Record<string, string> } = {}) =>
      (await eventually(path, 'match.example.com', path, (x) => x.status === 200, o)).headers['x-rule'];
    expect(await rule('/anything/exact')).toBe('exact');
    expect(await rule('/anything/exact/more')).toBe('default');
    expect(await rule('/anything/api/x')).toBe('prefix');
    expect(await rule('/anything/apix')).toBe('default');
    expect(await rule('/anything/api/x', { headers: { 'x-version': '2' } })).toBe('header');
    expect(await rule('/anything/api/x?debug=1')).toBe('query');
    expect(await rule('/anything/api/x', { method: 'POST' })).toBe('method');
    // Method outranks headers, headers outrank query params.
    expect(await rule('/anything/api/x?debug=1', { method: 'POST', headers: { 'x-version': '2' } })).toBe('method');
    expect(await rule('/anything/api/x?debug=1', { headers: { 'x-version': '2' } })).toBe('header');
    expect(await rule('/anything/items/42')).toBe('regex');
  });

  it('request and response header modifiers, redirect, URL rewrite and mirror', async () => {
    const h = await eventually('headers', 'filters.example.com', '/headers', (x) => x.status === 200, {
      headers: { 'x-remove': 'gone', 'x-add': 'mine', 'x-set': 'overwritten' },
    });
    const seen = h.json().headers;
    expect(seen['X-Set']).toEqual(['set']);
    expect(seen['X-Add']).toEqual(['mine', 'added']);
    expect(seen['X-Remove']).toBeUndefined();
    expect(h.headers['x-resp']).toBe('1');
    expect(h.headers['access-control-allow-credentials']).toBeUndefined();

    const redirect = await eventually('redirect', 'filters.example.com', '/old/page', (x) => x.status === 301);
    expect(redirect.headers.location).toMatch(/^http:\/\/moved\.example\.com(:\d+)?\/new\/page$/);

    const rw = await eventually('rewrite', 'filters.example.com', '/strip/x?y=1', (x) => x.status === 200);
    expect(rw.json().url).toMatch(/\/anything\/x\?y=1$/);
    expect(rw.json().headers.Host).toEqual(['rewritten.example.com']);

    const before = hits.v3.length;
    await eventually('mirror', 'filters.example.com', '/anything/mirror/1', (x) => x.status === 200);
    await until('the mirror got the request', async () =>
      hits.v3.slice(before).some((l) => l.uri === '/anything/mirror/1') ? true : undefined,
    );
  });

  it('weighted backendRefs split traffic (80/20, the 0 gets none)', async () => {
    await eventually('weights', 'weights.example.com', '/get', (x) => x.status === 200);
    const start = { v1: hits.v1.length, v2: hits.v2.length, v3: hits.v3.length };
    const n = 300;
    for (let i = 0; i < n; i++) expect((await req('weights.example.com', `/get?i=${i}`)).status).toBe(200);
    await until('access logs flushed', async () =>
      hits.v1.length - start.v1 + hits.v2.length - start.v2 >= n ? true : undefined,
    );
    const v1 = hits.v1.slice(start.v1).filter((l) => l.host === 'weights.example.com').length;
    const v2 = hits.v2.slice(start.v2).filter((l) => l.host === 'weights.example.com').length;
    expect(v1 + v2).toBe(n);
    expect(Math.abs(v1 / n - 0.8)).toBeLessThan(0.08);
    expect(hits.v3.slice(start.v3).filter((l) => l.host === 'weights.example.com')).toHaveLength(0);
  });

  it('cross-namespace backends need a ReferenceGrant; invalid backendRefs answer 500 and read ResolvedRefs=False', async () => {
    const granted = await eventually('granted', 'refs.example.com', '/anything/granted', (x) => x.status === 200);
    expect(granted.json().url).toContain('/anything/granted');
    expect(hits.shared.some((l) => l.uri === '/anything/granted')).toBe(true);
    expect((await req('refs.example.com', '/anything/denied')).status).toBe(500);
    expect(hits.denied).toHaveLength(0);
    expect((await req('refs.example.com', '/anything/missing')).status).toBe(500);
    expect((await req('refs.example.com', '/anything/kind')).status).toBe(500);
    const route = await until('refs status', async () => {
      const o = await getJson(['-n', 'apps', 'get', 'httproute', 'refs']);
      return o.status?.parents?.length ? o : undefined;
    });
    const rr = route.status.parents[0].conditions.find((c: any) => c.type === 'ResolvedRefs');
    expect(rr).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
    expect(rr.message).toContain('no ReferenceGrant in namespace denied');
    expect(rr.message).toContain('Service apps/nothere not found');
    expect(rr.message).toContain('example.com/Bucket is not a supported backend kind');
  });

  it('timeouts.request ends a slow request with 504', async () => {
    await eventually('slow fast path', 'slow.example.com', '/delay/0', (x) => x.status === 200);
    const t0 = Date.now();
    const r = await req('slow.example.com', '/delay/3');
    expect(r.status).toBe(504);
    expect(Date.now() - t0).toBeLessThan(2500);
    // timeouts.backendRequest bounds each attempt at the backend.
    const t1 = Date.now();
    expect((await req('slow.example.com', '/delay/2')).status).toBe(504);
    expect(Date.now() - t1).toBeLessThan(1800);
  });

  it('policies: a selector that matches nothing attaches nothing; the oldest policy wins, the newer reads Overridden', async () => {
    const r = await eventually('oldest', 'policy.example.com', '/get', (x) => x.headers['x-policy'] === 'oldest');
    expect(r.status).toBe(200); // the nomatch policy's 418 abort is attached nowhere
    await lab.k(['apply', '-f', '-'], NEWER_POLICY);
    const newest = await until('newest Overridden', async () => {
      const o = await getJson(['-n', 'apps', 'get', 'trafficpolicy', 'newest']);
      return o.status?.ancestors?.[0]?.conditions?.find((c: any) => c.type === 'Attached')?.reason === 'Overridden'
        ? o
        : undefined;
    });
    expect(newest.status.ancestors[0].conditions.find((c: any) => c.type === 'Accepted').status).toBe('True');
    expect(newest.status.ancestors[0].conditions.find((c: any) => c.type === 'Attached').message).toContain(
      'TrafficPolicy/apps/oldest',
    );
    // ... and says so in an Event (kubectl describe trafficpolicy newest).
    await until('an Overridden event', async () => {
      const ev = await getJson(['-n', 'apps', 'get', 'events', '--field-selector', 'involvedObject.name=newest']);
      return ev.items.some((e: any) => e.reason === 'Overridden' && e.type === 'Warning') ? true : undefined;
    });
    await eventually('still oldest', 'policy.example.com', '/get', (x) => x.headers['x-policy'] === 'oldest');
    const nomatch = await getJson(['-n', 'apps', 'get', 'trafficpolicy', 'nomatch']);
    expect(nomatch.status.ancestors ?? []).toEqual([]);
    expect(nomatch.status.conditions.find((c: any) => c.type === 'Attached')).toMatchObject({
      status: 'False',
      reason: 'TargetNotFound',
    });
    // Provenance in the proxy's config_dump.
    const dump = JSON.stringify(await (await fetch(`${proxy!.adminUrl}/config_dump`)).json());
    expect(dump).toContain(
      '"merge.TrafficPolicy.gateway.gwvendor.dev":{"headerModifiers":"TrafficPolicy/apps/oldest"}',
    );
  });

  it('rateLimit.local.percentEnforced 0 counts requests over the limit without refusing them; 100 refuses them (429)', async () => {
    // kgateway's LocalRateLimitPolicy.percentEnforced → the route's LocalRateLimit filter_enforced (Envoy's
    // local_ratelimit: a request over the limit counts as rate_limited, and is refused only when enforced).
    const limited = (enforced: number) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: limited, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [limited.example.com]
  rules: [{backendRefs: [{name: v1, port: 8000}]}]
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: limited, namespace: apps}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: limited}]
  rateLimit: {local: {tokenBucket: {maxTokens: 1, fillInterval: 1h}, percentEnforced: ${enforced}}}
`;
    const rateLimited = async () => {
      const text = await (await fetch(`${proxy!.adminUrl}/stats?filter=rate_limited`)).text();
      return Number(/http_local_rate_limiter\.http_local_rate_limit\.rate_limited: (\d+)/.exec(text)?.[1] ?? 0);
    };
    await lab.k(['apply', '-f', '-'], limited(0));
    await eventually('the shadow-mode route', 'limited.example.com', '/get', (x) => x.status === 200);
    const before = await rateLimited();
    for (let i = 0; i < 3; i++) expect((await req('limited.example.com', '/get')).status).toBe(200);
    expect(await rateLimited()).toBeGreaterThanOrEqual(before + 3);
    await lab.k(['apply', '-f', '-'], limited(100));
    const refused = await eventually('the enforced route', 'limited.example.com', '/get', (x) => x.status === 429);
    expect(refused.body).toBe('local_rate_limited');
  });

  it('ext auth through a GatewayExtension needs a ReferenceGrant for its Service in another namespace', async () => {
    await lab.k(['apply', '-f', '-'], EXT_AUTH(false));
    const pol = await until('missing grant reported', async () => {
      const o = await getJson(['-n', 'apps', 'get', 'trafficpolicy', 'auth']);
      return o.status?.conditions?.find((c: any) => c.type === 'ResolvedRefs')?.reason === 'RefNotPermitted'
        ? o
        : undefined;
    });
    expect(pol.status.conditions.find((c: any) => c.type === 'ResolvedRefs').message).toContain(
      'no ReferenceGrant in namespace extauth',
    );
    // Not applied: requests pass without the auth header.
    await eventually('no auth yet', 'auth.example.com', '/get', (x) => x.status === 200);
    await lab.k(['apply', '-f', '-'], EXT_AUTH(true));
    await eventually('auth denies', 'auth.example.com', '/get', (x) => x.status === 403);
    await eventually('auth allows', 'auth.example.com', '/get', (x) => x.status === 200, {
      headers: { 'x-ext-authz': 'allow' },
    });
  });

  it('validation on: an invalid header regex is caught at translation, reported in status, and nothing invalid is sent', async () => {
    const nacksBefore = cpLogs.filter((l) => l.includes('(NACK)')).length;
    await lab.k(
      ['apply', '-f', '-'],
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: badregex, namespace: apps}
spec:
  parentRefs: [{name: e2e, namespace: gwvendor-system}]
  hostnames: [bad.example.com]
  rules:
    - {matches: [{headers: [{name: x-user, type: RegularExpression, value: "(("}]}], backendRefs: [{name: v1, port: 8000}]}
    - {matches: [{path: {value: /anything/ok}}], backendRefs: [{name: v1, port: 8000}]}`,
    );
    const route = await until('PartiallyInvalid', async () => {
      const o = await getJson(['-n', 'apps', 'get', 'httproute', 'badregex']);
      return o.status?.parents?.[0]?.conditions?.find((c: any) => c.type === 'PartiallyInvalid') ? o : undefined;
    });
    expect(route.status.parents[0].conditions.find((c: any) => c.type === 'PartiallyInvalid').message).toContain(
      'invalid RE2 regex',
    );
    await eventually('valid rule served', 'bad.example.com', '/anything/ok', (x) => x.status === 200);
    expect(cpLogs.filter((l) => l.includes('(NACK)')).length).toBe(nacksBefore);
  });

  it('validation off: the invalid config is sent, the proxy NACKs it, and the NACK shows in log, metric, /snapshots/xds and status', async () => {
    await cp.stop();
    cp = controlPlane('off');
    await cp.start();
    const nack = await until(
      'a NACK in /snapshots/xds',
      async () => {
        const x = await admin('/snapshots/xds');
        return x.data[ROLE]?.proxies?.['e2e-abc.gwvendor-system']?.types?.routes?.last_nack;
      },
      30_000,
    );
    expect(nack.detail).toMatch(/\(\(|regex/i);
    expect(
      cpLogs.some((l) => l.includes('"msg":"proxy rejected configuration (NACK)"') && l.includes('"level":"warn"')),
    ).toBe(true);
    const metrics = await (await fetch(cp.admin!.url + '/metrics')).text();
    expect(metrics).toMatch(
      /gwvendor_xds_nacks_total\{type_url="type\.googleapis\.com\/envoy\.config\.route\.v3\.RouteConfiguration"\} [1-9]/,
    );
    const route = await until('Programmed=False/Rejected on the route', async () => {
      const o = await getJson(['-n', 'apps', 'get', 'httproute', 'badregex']);
      return o.status?.parents?.[0]?.conditions?.find((c: any) => c.type === 'Programmed' && c.reason === 'Rejected')
        ? o
        : undefined;
    });
    expect(route.status.parents[0].conditions.find((c: any) => c.type === 'Programmed').message).toContain(
      'validation is off',
    );
    // The proxy keeps serving its last good configuration.
    expect((await req('www.example.com', '/get')).status).toBe(200);
    const events = await getJson(['-n', 'apps', 'get', 'events', '--field-selector', 'involvedObject.name=badregex']);
    expect(events.items.some((e: any) => e.reason === 'Rejected' && e.type === 'Warning')).toBe(true);
  }, 60_000);
});
