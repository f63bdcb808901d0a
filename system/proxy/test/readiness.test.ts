// The readiness listener of a deployment (interfaces: a static listener on :8082 serving /ready from the admin's
// readiness, which the kubelet probes). Two bootstraps Envoy users write for it, both checked here:
//  - a route to a static cluster pointing at the admin address (the admin's /ready: LIVE, else 503 with the state);
//  - the health_check filter (200, 503 after /healthcheck/fail).
// Before the first config neither answers (static listeners take traffic once the server is live, as Envoy's
// workers start then), so a probe fails; after /healthcheck/fail both answer 503.
import http from 'node:http';
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
  staticCluster,
  type TestProxy,
  vhost,
} from '../testing/harness.ts';
import { closedPort } from '../testing/upstream.ts';
import { startTestXdsServer, type TestXdsServer } from '../testing/xds-server.ts';

let app: SampleApp;
let xds: TestXdsServer;
let proxy: TestProxy;

/** A kubelet-style probe: GET with a 1 s timeout; anything but a 2xx/3xx answer (or no answer) is a failure. */
function probe(port: number, path: string): Promise<number | 'timeout' | 'refused'> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', () => resolve('refused'));
  });
}

beforeAll(async () => {
  app = await startSampleApp();
  xds = await startTestXdsServer();
  const adminPort = await closedPort();
  const readinessViaAdmin = listener('readiness-admin', 0, {
    accessLog: false,
    routeConfig: routeConfig('readiness-admin', [
      vhost('all', ['*'], [{ match: { path: '/ready' }, route: { cluster: 'admin_port_cluster' } }]),
    ]),
  });
  const readinessViaFilter = listener('readiness-filter', 0, {
    accessLog: false,
    filters: [
      {
        name: 'envoy.filters.http.health_check',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck',
          pass_through_mode: false,
          headers: [{ name: ':path', string_match: { exact: '/ready' } }],
        },
      },
    ],
    routeConfig: routeConfig('readiness-filter', [
      vhost('all', ['*'], [{ match: { prefix: '/' }, direct_response: { status: 404 } }]),
    ]),
  });
  const b = bootstrapJson({
    xdsPort: xds.port,
    adminPort,
    staticClusters: [staticCluster('admin_port_cluster', [['127.0.0.1', adminPort]])],
    staticListeners: [readinessViaAdmin, readinessViaFilter],
  });
  proxy = await startTestProxy(b);
});

afterAll(async () => {
  await proxy?.close();
  await xds?.close();
  await app?.close();
});

describe('readiness listener', () => {
  it('fails the probe before the first config', async () => {
    await xds.waitFor((r) => r.type_url === TYPE_URL.cluster);
    expect(await probe(proxy.port('readiness-admin'), '/ready')).toBe('timeout');
    expect(await probe(proxy.port('readiness-filter'), '/ready')).toBe('timeout');
    expect((await proxy.admin('/ready')).body).toBe('INITIALIZING\n');
  });

  it('passes once the first config is in', async () => {
    xds.setSnapshot('1', {
      clusters: [edsCluster('app')],
      endpoints: [cla('app', [['127.0.0.1', app.port]])],
      listeners: [listener('listener~8080', 0, { rds: 'listener~8080' })],
      routes: [routeConfig('listener~8080', [vhost('www', ['*'], [route('/', 'app')])])],
    });
    await proxy.server.live;
    const viaAdmin = await httpRequest(`http://127.0.0.1:${proxy.port('readiness-admin')}/ready`);
    expect(viaAdmin.status).toBe(200);
    expect(viaAdmin.body).toBe('LIVE\n');
    expect(await probe(proxy.port('readiness-filter'), '/ready')).toBe(200);
  });

  it('fails after /healthcheck/fail and passes again after /healthcheck/ok', async () => {
    await proxy.admin('/healthcheck/fail', 'POST');
    const viaAdmin = await httpRequest(`http://127.0.0.1:${proxy.port('readiness-admin')}/ready`);
    expect(viaAdmin.status).toBe(503);
    expect(viaAdmin.body).toBe('DRAINING\n');
    expect(await probe(proxy.port('readiness-filter'), '/ready')).toBe(503);
    await proxy.admin('/healthcheck/ok', 'POST');
    expect(await probe(proxy.port('readiness-admin'), '/ready')).toBe(200);
    expect(await probe(proxy.port('readiness-filter'), '/ready')).toBe(200);
  });
});
