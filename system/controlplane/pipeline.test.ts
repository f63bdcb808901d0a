// Incremental recomputation: one HTTPRoute edit recomputes that route, the one Gateway it names and that Gateway's
// snapshot, and nothing else; an endpoint change does not re-translate routes; an address change touches only status.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Runtime } from './krt/collection.ts';
import type { HTTPRoute } from './model.ts';
import { translateYaml } from './offline.ts';
import { Pipeline } from './pipeline.ts';

function world(gateways: number, routesPerGateway: number) {
  const rt = new Runtime({ autoFlush: false });
  const p = new Pipeline({ mode: 'strict', runtime: rt });
  p.gatewayClasses.upsert({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'gwvendor' },
    spec: { controllerName: 'gateway.gwvendor.dev/gwvendor' },
  });
  for (let g = 0; g < gateways; g++) {
    p.gatewaysIn.upsert({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: `gw${g}`, namespace: 'default' },
      spec: { gatewayClassName: 'gwvendor', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
    });
    p.services.upsert({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `svc${g}`, namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80 }] },
    });
    for (let r = 0; r < routesPerGateway; r++) p.httpRoutes.upsert(route(g, r, `/r${r}`));
  }
  rt.flush();
  return { rt, p };
}

function route(g: number, r: number, path: string): HTTPRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: `gw${g}-route${r}`, namespace: 'default', generation: 1 },
    spec: {
      parentRefs: [{ name: `gw${g}` }],
      hostnames: [`r${r}.gw${g}.example.com`],
      rules: [
        { matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: `svc${g}`, port: 80 }] },
      ],
    },
  };
}

const counts = (p: Pipeline) =>
  Object.fromEntries(
    (['routes', 'gateways', 'xds', 'endpoints', 'snapshots', 'gatewayStatuses', 'routeStatuses'] as const).map((k) => [
      k,
      (
        (k in p.statuses ? p.statuses[k as keyof Pipeline['statuses']] : p[k as keyof Pipeline]) as unknown as {
          recomputations: number;
        }
      ).recomputations,
    ]),
  );

function delta(before: Record<string, number>, after: Record<string, number>) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
}

describe('incremental recomputation', () => {
  it('one route edit recomputes one Gateway and its snapshot', () => {
    const { rt, p } = world(10, 20);
    expect(p.snapshots.size()).toBe(10);
    const untouched = p.snapshots.get('default/gw7');
    const before = counts(p);
    p.httpRoutes.upsert(route(3, 5, '/edited'));
    rt.flush();
    const d = delta(before, counts(p));
    expect(d).toEqual({
      routes: 1,
      gateways: 1,
      xds: 1,
      endpoints: 1,
      snapshots: 1,
      gatewayStatuses: 1,
      routeStatuses: 1,
    });
    const vh = p.snapshots.get('default/gw3')!.routes[0].virtual_hosts as { routes: { match: unknown }[] }[];
    expect(JSON.stringify(vh)).toContain('/edited');
    // Other Gateways' outputs are the very same objects: not recomputed, not re-sent.
    expect(p.snapshots.get('default/gw7')).toBe(untouched);
  });

  it('an endpoint change recomputes the endpoints and snapshot of the Gateways using the Service, not the routes', () => {
    const { rt, p } = world(4, 5);
    const before = counts(p);
    p.endpointSlices.upsert({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'svc2-x', namespace: 'default', labels: { 'kubernetes.io/service-name': 'svc2' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.10.0.7'], conditions: { ready: true } }],
      ports: [{ name: 'http', port: 8080 }],
    });
    rt.flush();
    expect(delta(before, counts(p))).toEqual({
      routes: 0,
      gateways: 0,
      xds: 0,
      endpoints: 1,
      snapshots: 1,
      gatewayStatuses: 0,
      routeStatuses: 0,
    });
    expect(p.snapshots.get('default/gw2')!.endpoints[0]).toMatchObject({
      cluster_name: 'kube_default_svc2_80',
      endpoints: [
        { lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.10.0.7', port_value: 8080 } } } }] },
      ],
    });
  });

  it("the proxy Service's load balancer address changes only the Gateway's status", () => {
    const { rt, p } = world(3, 2);
    const before = counts(p);
    p.services.upsert({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'gw1', namespace: 'default' },
      spec: { type: 'LoadBalancer', ports: [{ port: 8080 }] },
      status: { loadBalancer: { ingress: [{ ip: '127.30.0.9' }] } },
    });
    rt.flush();
    expect(delta(before, counts(p))).toEqual({
      routes: 0,
      gateways: 0,
      xds: 0,
      endpoints: 0,
      snapshots: 0,
      gatewayStatuses: 1,
      routeStatuses: 0,
    });
    expect(p.statuses.gatewayStatuses.get('default/gw1')!.status.addresses).toEqual([
      { type: 'IPAddress', value: '127.30.0.9' },
    ]);
  });
});

describe('/snapshots/krt redaction', () => {
  it("shows a GatewayParameters' env names, not their values, and drops managedFields; the pipeline keeps the object", () => {
    const rt = new Runtime({ autoFlush: false, start: false });
    const p = new Pipeline({ mode: 'strict', runtime: rt });
    p.gatewayParameters.upsert({
      apiVersion: 'gateway.gwvendor.dev/v1alpha1',
      kind: 'GatewayParameters',
      metadata: { name: 'gp', namespace: 'ns', managedFields: [{ manager: 'kubectl' }] } as never,
      spec: {
        kube: {
          envoyContainer: {
            env: [
              { name: 'API_TOKEN', value: 's3cr3t-value' },
              { name: 'FROM_REF', valueFrom: {} },
            ],
          },
        },
      },
    });
    const dump = rt.dump().find((c) => c.name === 'GatewayParameters')!;
    const shown = JSON.stringify(dump);
    expect(shown).not.toContain('s3cr3t-value');
    expect(shown).not.toContain('managedFields');
    expect((dump.state.outputs['ns/gp'] as any).spec.kube.envoyContainer.env).toEqual([
      { name: 'API_TOKEN', value: '<redacted>' },
      { name: 'FROM_REF', valueFrom: {} },
    ]);
    expect(p.gatewayParameters.get('ns/gp')!.spec!.kube!.envoyContainer!.env![0].value).toBe('s3cr3t-value');
  });

  it("shows a Secret's type and key names, never its values; the pipeline keeps the object", () => {
    const rt = new Runtime({ autoFlush: false, start: false });
    const p = new Pipeline({ mode: 'strict', runtime: rt });
    p.secrets.upsert({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cert', namespace: 'ns' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Y2VydC1ieXRlcw==', 'tls.key': 'a2V5LWJ5dGVz' },
    });
    const dump = rt.dump().find((c) => c.name === 'Secrets')!;
    expect(JSON.stringify(dump)).not.toContain('a2V5LWJ5dGVz');
    expect((dump.state.outputs['ns/cert'] as any).data).toEqual({ 'tls.crt': '<redacted>', 'tls.key': '<redacted>' });
    expect((dump.state.outputs['ns/cert'] as any).type).toBe('kubernetes.io/tls');
    expect(p.secrets.get('ns/cert')!.data!['tls.key']).toBe('a2V5LWJ5dGVz');
  });

  // Envoy's config_dump shows a DataSource private key as "[redacted]" (MessageUtil::redact): so do the IR, xDS and
  // snapshot collections, while the snapshot sent to the proxy carries the key.
  it("shows an HTTPS listener's private key as [redacted] in the IR, Xds and Snapshots collections", () => {
    const input = readFileSync(new URL('./testdata/listeners-https/input.yaml', import.meta.url), 'utf8');
    const key = /tls\.key: (LS0t[A-Za-z0-9+/=]+)/.exec(input)![1];
    const out = translateYaml(input, { mode: 'strict' });
    expect(JSON.stringify(out.xds)).toContain(key);
    const dumps = out.pipeline.rt.dump();
    expect(JSON.stringify(dumps)).not.toContain(key);
    const shown = (name: string) => JSON.stringify(dumps.filter((c) => c.name === name));
    expect(shown('Gateways')).toMatch(/"privateKey":"\[redacted\]"/);
    expect(shown('Xds')).toMatch(/"private_key":\{"inline_bytes":"W3JlZGFjdGVkXQ=="\}/);
    expect(shown('Snapshots')).toMatch(/"private_key":\{"inline_bytes":"W3JlZGFjdGVkXQ=="\}/);
  });
});

describe('incremental recomputation of TCPRoutes and ListenerSets', () => {
  it('a TCPRoute edit recomputes that route and its one Gateway; a ListenerSet edit its parent Gateway only', () => {
    const { rt, p } = world(5, 1);
    p.gatewaysIn.upsert({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw2', namespace: 'default' },
      spec: {
        gatewayClassName: 'gwvendor',
        allowedListeners: { namespaces: { from: 'Same' } },
        listeners: [
          { name: 'http', port: 8080, protocol: 'HTTP' },
          { name: 'tcp', port: 9000, protocol: 'TCP' },
        ],
      },
    });
    const tcp = (port: number) => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'TCPRoute',
      metadata: { name: 'db', namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw2', sectionName: 'tcp' }], rules: [{ backendRefs: [{ name: 'svc2', port }] }] },
    });
    const set = (port: number) => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: 'extra', namespace: 'default' },
      spec: { parentRef: { name: 'gw2' }, listeners: [{ name: 'more', port, protocol: 'HTTP' }] },
    });
    p.tcpRoutes.upsert(tcp(80));
    p.listenerSets.upsert(set(8081));
    rt.flush();
    const listeners = () => p.snapshots.get('default/gw2')!.listeners.map((l) => l.name);
    expect(listeners()).toEqual(['listener~8080', 'listener~8081', 'listener~9000']);
    const other = p.snapshots.get('default/gw4');
    const l4 = (x: Pipeline) => (x.tcpRouteInfos as unknown as { recomputations: number }).recomputations;
    let before = { ...counts(p), tcp: l4(p) };
    p.tcpRoutes.upsert(tcp(81));
    rt.flush();
    expect(delta(before, { ...counts(p), tcp: l4(p) })).toMatchObject({ tcp: 1, gateways: 1, xds: 1, snapshots: 1 });
    before = { ...counts(p), tcp: l4(p) };
    p.listenerSets.upsert(set(8082));
    rt.flush();
    expect(delta(before, { ...counts(p), tcp: l4(p) })).toMatchObject({ tcp: 0, routes: 0, gateways: 1, snapshots: 1 });
    expect(listeners()).toEqual(['listener~8080', 'listener~8082', 'listener~9000']);
    expect(p.snapshots.get('default/gw4')).toBe(other);
  });
});
