// Pure readers of admin output (route lookup with provenance, error_state), and port-forward + admin sessions against
// an embedded test cluster with a real pod.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../embedded/testing/test-cluster.ts';
import {
  adminSession,
  type ConfigDump,
  domainMatches,
  dynamicErrors,
  findRoutes,
  selectorString,
  setLogLevel,
} from './admin.ts';
import { Kube } from './kube.ts';
import { portForward } from './portforward.ts';

const DUMP: ConfigDump = {
  configs: [
    { '@type': 'type.googleapis.com/envoy.admin.v3.BootstrapConfigDump', bootstrap: {} },
    {
      '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
      dynamic_listeners: [
        {
          name: 'listener~8080',
          active_state: { listener: { name: 'listener~8080' } },
          error_state: { details: "Invalid regex '(': missing ')'", last_update_attempt: '2026-11-22T10:00:00Z' },
        },
      ],
    },
    {
      '@type': 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
      dynamic_route_configs: [
        {
          version_info: '3',
          route_config: {
            name: 'listener~8080',
            virtual_hosts: [
              {
                name: 'listener~8080~www_example_com',
                domains: ['www.example.com'],
                routes: [
                  {
                    name: 'httproute/ns/r1/rule/0/match/0',
                    match: { prefix: '/api' },
                    metadata: {
                      filter_metadata: { 'merge.TrafficPolicy.gateway.gwvendor.dev': { timeouts: 'ns/slow' } },
                    },
                  },
                  { name: 'httproute/ns/r1/rule/1/match/0', match: { path: '/exact' } },
                  { name: 'httproute/ns/r1/rule/2/match/0', match: { safe_regex: { regex: '/v[0-9]+/.*' } } },
                ],
              },
              {
                name: 'listener~8080~wild',
                domains: ['*.example.org'],
                routes: [{ name: 'w', match: { prefix: '/' } }],
              },
            ],
          },
        },
      ],
    },
  ],
};

describe('admin readers', () => {
  it('finds routes by host and path, with the provenance of each setting', () => {
    const hits = findRoutes(DUMP, { host: 'www.example.com', path: '/api/x' });
    expect(hits.map((h) => h.name)).toEqual(['httproute/ns/r1/rule/0/match/0']);
    expect(hits[0].provenance).toEqual({ timeouts: 'ns/slow' });
    expect(hits[0].vhost).toBe('listener~8080~www_example_com');
    expect(findRoutes(DUMP, { host: 'www.example.com', path: '/exact' })[0].provenance).toEqual({});
    expect(findRoutes(DUMP, { host: 'www.example.com', path: '/v2/users' }).map((h) => h.name)).toEqual([
      'httproute/ns/r1/rule/2/match/0',
    ]);
    expect(findRoutes(DUMP, { host: 'a.example.org:8080' }).map((h) => h.name)).toEqual(['w']);
    expect(findRoutes(DUMP, { host: 'example.org' })).toEqual([]);
    expect(findRoutes(DUMP)).toHaveLength(4);
  });

  it('matches domains as Envoy does', () => {
    expect(domainMatches('*', 'x')).toBe(true);
    expect(domainMatches('*.a.com', 'b.a.com')).toBe(true);
    expect(domainMatches('*.a.com', '.a.com')).toBe(false);
    expect(domainMatches('a.*', 'a.com')).toBe(true);
    expect(domainMatches('A.com', 'a.COM:80')).toBe(true);
  });

  it("writes a workload's selector as a labelSelector, matchExpressions included (the shared selector module)", () => {
    expect(
      selectorString({
        matchLabels: { app: 'gwvendor' },
        matchExpressions: [{ key: 'track', operator: 'NotIn', values: ['canary'] }],
      }),
    ).toBe('app=gwvendor,track notin (canary)');
  });

  it('lists rejected resources from error_state', () => {
    expect(dynamicErrors(DUMP)).toEqual([
      {
        typeUrl: 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
        name: 'listener~8080',
        error: "Invalid regex '(': missing ')'",
        lastUpdateAttempt: '2026-11-22T10:00:00Z',
      },
    ]);
  });
});

const APP = join(dirname(fileURLToPath(import.meta.url)), '..', 'embedded', 'node', 'testdata', 'http-app.mjs');

describe('port-forward and admin sessions through the API', () => {
  let c: TestCluster;
  let kube: Kube;

  beforeAll(async () => {
    c = await startTestCluster({ images: { 'gwlab.test/http-app:1': ['node', APP] } });
    kube = new Kube(await c.lab.server.kubeConfig());
    await c.k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Namespace
metadata: {name: tk}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: tk}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: gwlab.test/http-app:1
        ports: [{containerPort: 8080}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`,
    );
    await c.k(['rollout', 'status', 'deployment/web', '-n', 'tk', '--timeout=60s']);
  }, 90_000);

  afterAll(async () => {
    await c?.stop();
  });

  it('forwards to a ready pod picked by selector, many requests over one forward, and closes', async () => {
    const fwd = await portForward(kube.kc, { namespace: 'tk', labelSelector: 'app=web', port: 8080 });
    expect(fwd.pod).toMatch(/^web-/);
    const admin = adminSession(fwd, 'test');
    const bodies = await Promise.all(Array.from({ length: 5 }, (_, i) => admin.json<{ pod: string }>(`/r${i}`)));
    expect(bodies.map((b) => b.pod)).toEqual(Array(5).fill(fwd.pod));
    // The test app answers any method; a POST reaches it with its query.
    await setLogLevel(admin, { upstream: 'debug' });
    await fwd.close();
    await expect(fetch(`${fwd.url}/after-close`)).rejects.toThrow();
  });

  it('says which pods it found when none is ready', async () => {
    await expect(portForward(kube.kc, { namespace: 'tk', labelSelector: 'app=none', port: 8080 })).rejects.toThrow(
      /no Running and Ready pod in namespace tk matches app=none \(found: no pods\)/,
    );
  });
});
