// The ADS server with a real grpc-js client: wildcard CDS/LDS, named EDS/RDS, ACK and NACK per node, no resend of a
// NACKed version, stale nonces ignored, and snapshot changes pushed in the order CDS, EDS, LDS, RDS.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackAny } from '../../shared/envoy/protojson.ts';
import { adsService, TYPE_URL } from '../../shared/envoy/protos.ts';
import { LogRegistry } from '../../shared/log.ts';
import { translateYaml } from '../offline.ts';
import type { SnapshotResources } from '../pipeline.ts';
import { SnapshotCache } from './cache.ts';
import { AdsServer, type ProxyStream } from './server.ts';

const YAML = (path: string, ip: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gwvendor}
spec: {controllerName: gateway.gwvendor.dev/gwvendor}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec: {gatewayClassName: gwvendor, listeners: [{name: http, protocol: HTTP, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules: [{matches: [{path: {value: ${path}}}], backendRefs: [{name: app, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-1, namespace: ns, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
endpoints: [{addresses: [${ip}]}]
ports: [{name: http, port: 8080}]
`;

const ROLE = 'gwvendor-kube-gateway-api~ns~gw';
function resources(path: string, ip = '127.10.0.1'): SnapshotResources {
  return translateYaml(YAML(path, ip)).pipeline.snapshots.get('ns/gw')!;
}

interface Resp {
  version_info: string;
  type_url: string;
  nonce: string;
  resources: { type_url: string; value: Buffer }[];
}

/** A minimal ADS client: records responses, lets the test send requests. */
function client(port: number, nodeId: string) {
  const Ctor = grpc.makeClientConstructor(adsService(), 'AggregatedDiscoveryService') as any;
  const c = new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = c.StreamAggregatedResources();
  const got: Resp[] = [];
  const waiters: (() => void)[] = [];
  call.on('data', (r: Resp) => {
    got.push(r);
    for (const w of waiters.splice(0)) w();
  });
  call.on('error', () => {});
  let first = true;
  return {
    got,
    send(typeUrl: string, o: { version?: string; nonce?: string; names?: string[]; error?: string } = {}) {
      call.write({
        version_info: o.version ?? '',
        node: first
          ? { id: nodeId, cluster: 'gw.ns', metadata: { fields: { role: { stringValue: ROLE } } } }
          : undefined,
        resource_names: o.names ?? [],
        type_url: typeUrl,
        response_nonce: o.nonce ?? '',
        error_detail: o.error ? { code: 3, message: o.error } : undefined,
      });
      first = false;
    },
    async next(n = 1, timeoutMs = 3000): Promise<Resp[]> {
      const start = got.length;
      const deadline = Date.now() + timeoutMs;
      while (got.length < start + n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} responses, got ${got.length - start}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
      return got.slice(start, start + n);
    },
    close() {
      call.end();
      c.close();
    },
  };
}

const names = (r: Resp) =>
  r.resources.map((a) => {
    const j = unpackAny(a);
    return String(j.name ?? j.cluster_name);
  });

describe('ADS server', () => {
  const cache = new SnapshotCache();
  const logs = new LogRegistry({
    level: process.env.XDS_TEST_LOG ? 'debug' : 'off',
    sink: (l) => process.stderr.write(l + '\n'),
  });
  const events: string[] = [];
  const ads = new AdsServer(cache, logs.logger('xds'), {
    onAck: (s: ProxyStream, t, v) => events.push(`ack ${s.nodeId} ${t.split('.').pop()} ${v}`),
    onNack: (s: ProxyStream, t, v, d) => events.push(`nack ${s.nodeId} ${t.split('.').pop()} ${v} ${d}`),
  });
  let port = 0;
  beforeAll(async () => {
    port = await ads.listen(0, '127.0.0.1');
    cache.set(resources('/a'));
  });
  afterAll(() => ads.close());

  it('serves wildcard CDS/LDS and named EDS/RDS, tracks ACKs per node, pushes changes in order', async () => {
    const p = client(port, 'proxy-1.ns');
    p.send(TYPE_URL.cluster);
    const [cds] = await p.next();
    expect([cds.type_url, cds.version_info, names(cds)]).toEqual([TYPE_URL.cluster, '1', ['kube_ns_app_80']]);
    p.send(TYPE_URL.cluster, { version: '1', nonce: cds.nonce });
    p.send(TYPE_URL.clusterLoadAssignment, { names: ['kube_ns_app_80'] });
    const [eds] = await p.next();
    expect(names(eds)).toEqual(['kube_ns_app_80']);
    p.send(TYPE_URL.clusterLoadAssignment, { version: eds.version_info, nonce: eds.nonce, names: ['kube_ns_app_80'] });
    p.send(TYPE_URL.listener);
    const [lds] = await p.next();
    expect(names(lds)).toEqual(['listener~8080']);
    p.send(TYPE_URL.listener, { version: lds.version_info, nonce: lds.nonce });
    p.send(TYPE_URL.routeConfiguration, { names: ['listener~8080'] });
    const [rds] = await p.next();
    expect(unpackAny(rds.resources[0])).toMatchObject({ name: 'listener~8080' });
    p.send(TYPE_URL.routeConfiguration, { version: rds.version_info, nonce: rds.nonce, names: ['listener~8080'] });
    await new Promise((r) => setTimeout(r, 50));
    expect(ads.connected()).toHaveLength(1);
    const st = ads.connected()[0];
    expect(st.nodeId).toBe('proxy-1.ns');
    expect([...st.types.values()].map((t) => t.status)).toEqual(['ACKED', 'ACKED', 'ACKED', 'ACKED']);

    // A new path and a new endpoint address: only EDS and RDS change, and only they are pushed (EDS first).
    cache.set(resources('/b', '127.10.0.2'));
    const pushed = await p.next(2);
    expect(pushed.map((r) => r.type_url)).toEqual([TYPE_URL.clusterLoadAssignment, TYPE_URL.routeConfiguration]);
    expect(pushed.map((r) => r.version_info)).toEqual(['2', '2']);
    expect(JSON.stringify(unpackAny(pushed[1].resources[0]))).toContain('/b');
    for (const r of pushed) {
      p.send(r.type_url, {
        version: r.version_info,
        nonce: r.nonce,
        names: r.type_url === TYPE_URL.clusterLoadAssignment ? ['kube_ns_app_80'] : ['listener~8080'],
      });
    }
    await new Promise((r) => setTimeout(r, 50));

    // Every type changes: pushed in the order CDS, EDS, LDS, RDS.
    const all = resources('/c', '127.10.0.3');
    all.clusters = all.clusters.map((c) => ({ ...c, connect_timeout: '2s' }));
    all.listeners = all.listeners.map((l) => ({ ...l, per_connection_buffer_limit_bytes: 32768 }));
    cache.set(all);
    const ordered = await p.next(4);
    expect(ordered.map((r) => r.type_url)).toEqual([
      TYPE_URL.cluster,
      TYPE_URL.clusterLoadAssignment,
      TYPE_URL.listener,
      TYPE_URL.routeConfiguration,
    ]);
    expect(new Set(ordered.map((r) => r.version_info))).toEqual(new Set(['3']));
    p.close();
  });

  it('a NACK is recorded with its detail, the NACKed version is not resent, the next version is', async () => {
    const p = client(port, 'proxy-2.ns');
    p.send(TYPE_URL.listener);
    const [lds] = await p.next();
    p.send(TYPE_URL.listener, { version: '', nonce: lds.nonce, error: 'listener~8080: bad regex' });
    await new Promise((r) => setTimeout(r, 100));
    expect(p.got).toHaveLength(1);
    const st = ads.connected().find((s) => s.nodeId === 'proxy-2.ns')!;
    expect(st.types.get(TYPE_URL.listener)).toMatchObject({
      status: 'NACKED',
      lastError: { detail: 'listener~8080: bad regex' },
    });
    expect(events).toContain(`nack proxy-2.ns Listener ${lds.version_info} listener~8080: bad regex`);

    // A stale nonce gets no answer.
    p.send(TYPE_URL.listener, { version: '', nonce: 'not-the-latest' });
    await new Promise((r) => setTimeout(r, 100));
    expect(p.got).toHaveLength(1);

    // The next snapshot with a listener change is pushed.
    const next = resources('/b', '127.10.0.2');
    next.listeners = next.listeners.map((l) => ({ ...l, per_connection_buffer_limit_bytes: 65536 }));
    cache.set(next);
    const [again] = await p.next();
    expect(again.type_url).toBe(TYPE_URL.listener);
    expect(Number(again.version_info)).toBeGreaterThan(Number(lds.version_info));
    p.close();
  });

  it('refuses a stream whose node has no role', async () => {
    const Ctor = grpc.makeClientConstructor(adsService(), 'AggregatedDiscoveryService') as any;
    const c = new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const call = c.StreamAggregatedResources();
    const err = await new Promise<any>((resolve) => {
      call.on('error', resolve);
      call.on('data', () => {});
      call.write({ node: { id: 'x' }, type_url: TYPE_URL.cluster });
    });
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain('node.metadata.role');
    c.close();
  });
});
