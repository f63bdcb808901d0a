// A first request through the proxy: the first config over ADS (cluster, endpoints, listener, routes), then 200.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
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

let app: SampleApp;
let xds: TestXdsServer;
let proxy: TestProxy;

beforeAll(async () => {
  app = await startSampleApp();
  xds = await startTestXdsServer();
  proxy = await startTestProxy(bootstrapJson({ xdsPort: xds.port }), { level: 'debug' });
});
afterAll(async () => {
  await proxy?.close();
  await xds?.close();
  await app?.close();
});

it('serves /headers after the first config', async () => {
  xds.setSnapshot('1', {
    clusters: [edsCluster('kube_sampleapp_sampleapp_8000')],
    endpoints: [cla('kube_sampleapp_sampleapp_8000', [['127.0.0.1', app.port]])],
    listeners: [listener('listener~0', 0, { rds: 'listener~0' })],
    routes: [
      routeConfig('listener~0', [vhost('v', ['www.example.com'], [route('/', 'kube_sampleapp_sampleapp_8000')])]),
    ],
  });
  await proxy.server.live;
  const port = proxy.port('listener~0');
  const r = await httpRequest(`http://127.0.0.1:${port}/headers`, { host: 'www.example.com' });
  expect(r.status).toBe(200);
});
