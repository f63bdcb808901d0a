// Incremental xDS (ads_config.api_type: DELTA_GRPC): subscriptions by delta, changed resources only, removals,
// ACK and NACK by nonce, and a reconnect that tells the server which versions the proxy already has.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import {
  bootstrapJson,
  cla,
  edsCluster,
  httpRequest,
  listener,
  route,
  routeConfig,
  startTestProxy,
  type TestProxy,
  vhost,
} from '../testing/harness.ts';
import { startTestXdsServer, type TestXdsServer } from '../testing/xds-server.ts';

const APP = 'kube_sampleapp_sampleapp_8000';
const L = 'listener~8080';
let app: SampleApp;
let xds: TestXdsServer;
let proxy: TestProxy;

const get = (path: string) => httpRequest(`http://127.0.0.1:${proxy.port(L)}${path}`, { host: 'www.example.com' });
const ack = (type: string, from = 0) => xds.waitFor((r) => r.type_url === type && r.kind === 'ack', 10_000, from);

beforeAll(async () => {
  app = await startSampleApp();
  xds = await startTestXdsServer();
  proxy = await startTestProxy(bootstrapJson({ xdsPort: xds.port, delta: true }));
});

afterAll(async () => {
  await proxy?.close();
  await xds?.close();
  await app?.close();
});

describe('delta xDS', () => {
  it('subscribes by wildcard with the node on the first request only, then by name for EDS and RDS', async () => {
    const cds = await xds.waitFor((r) => r.type_url === TYPE_URL.cluster);
    expect(cds.delta).toEqual({ subscribe: [], unsubscribe: [], initial: {} });
    expect(cds.node?.id).toBe('gw-0.gwvendor-system');
    const lds = await xds.waitFor((r) => r.type_url === TYPE_URL.listener);
    expect(lds.node).toBeUndefined();
    xds.setSnapshot('1', {
      clusters: [edsCluster(APP), edsCluster('other')],
      endpoints: [cla(APP, [['127.0.0.1', app.port]]), cla('other', [['127.0.0.1', app.port]])],
      listeners: [listener(L, 0, { rds: L })],
      routes: [routeConfig(L, [vhost('www', ['www.example.com'], [route('/', APP)])])],
    });
    for (const t of [TYPE_URL.cluster, TYPE_URL.clusterLoadAssignment, TYPE_URL.listener, TYPE_URL.routeConfiguration])
      await ack(t);
    const eds = await xds.waitFor((r) => r.type_url === TYPE_URL.clusterLoadAssignment && r.kind === 'initial');
    expect(eds.delta?.subscribe).toEqual([APP, 'other']);
    const rds = await xds.waitFor((r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'initial');
    expect(rds.delta?.subscribe).toEqual([L]);
    await proxy.server.live;
    const r = await get('/headers');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).headers.Host).toEqual(['www.example.com']);
  });

  it('applies changed resources and removals', async () => {
    let from = xds.requests.length;
    xds.set(TYPE_URL.routeConfiguration, '2', [
      routeConfig(L, [
        vhost(
          'www',
          ['www.example.com'],
          [{ match: { prefix: '/' }, direct_response: { status: 207, body: { inline_string: 'delta' } } }],
        ),
      ]),
    ]);
    await ack(TYPE_URL.routeConfiguration, from);
    expect((await get('/x')).status).toBe(207);
    // Removing a cluster: the proxy drops it and unsubscribes its endpoints.
    from = xds.requests.length;
    xds.set(TYPE_URL.cluster, '3', [edsCluster(APP)]);
    await ack(TYPE_URL.cluster, from);
    const unsub = await xds.waitFor(
      (r) => r.type_url === TYPE_URL.clusterLoadAssignment && (r.delta?.unsubscribe.length ?? 0) > 0,
      10_000,
      from,
    );
    expect(unsub.delta?.unsubscribe).toEqual(['other']);
    expect(proxy.server.clusters.get('other')).toBeUndefined();
  });

  it('NACKs a bad resource with error_detail and keeps the old config', async () => {
    const from = xds.requests.length;
    xds.set(TYPE_URL.routeConfiguration, '4', [
      routeConfig(L, [
        vhost('www', ['www.example.com'], [{ match: { safe_regex: { regex: '(' } }, route: { cluster: APP } }]),
      ]),
    ]);
    const nack = await xds.waitFor(
      (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'nack',
      10_000,
      from,
    );
    expect(nack.error_detail?.message).toContain("Invalid regex '('");
    expect((await get('/x')).status).toBe(207);
    expect(proxy.logs.some((l) => l.includes('][warning][config] ') && l.includes('rejected: '))).toBe(true);
  });

  it('reconnects with initial_resource_versions and gets only what changed', async () => {
    const port = xds.port;
    await xds.close();
    xds = await startTestXdsServer(port);
    xds.setSnapshot('5', {
      clusters: [edsCluster(APP)],
      endpoints: [cla(APP, [['127.0.0.1', app.port]])],
      listeners: [listener(L, 0, { rds: L })],
      routes: [routeConfig(L, [vhost('www', ['www.example.com'], [route('/', APP)])])],
    });
    const cds = await xds.waitFor((r) => r.type_url === TYPE_URL.cluster && r.kind === 'initial');
    expect(Object.keys(cds.delta?.initial ?? {})).toEqual([APP]);
    const rds = await xds.waitFor((r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'initial');
    expect(Object.keys(rds.delta?.initial ?? {})).toEqual([L]);
    await ack(TYPE_URL.routeConfiguration);
    const r = await get('/headers');
    expect(r.status).toBe(200);
    // The clusters, endpoints and listener were unchanged: the new server sent nothing for them.
    for (const t of [TYPE_URL.cluster, TYPE_URL.clusterLoadAssignment, TYPE_URL.listener]) {
      expect(xds.requests.some((x) => x.type_url === t && x.kind === 'ack')).toBe(false);
    }
  });
});
