import http from 'node:http';
import autocannon from 'autocannon';
import { startSampleApp } from '../sampleapp/main.ts';
import {
  bootstrapJson,
  listener,
  route,
  routeConfig,
  startTestProxy,
  staticCluster,
  vhost,
} from './testing/harness.ts';

const app = await startSampleApp();
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

import { Pool } from 'undici';

const pool = new Pool(`http://127.0.0.1:${app.port}`, { connections: 128 });
const bare = http
  .createServer(async (req, res) => {
    const h = { ...req.headers };
    delete h.connection;
    const r = await pool.request({
      path: req.url!,
      method: req.method as any,
      headers: h,
      body: req.method === 'GET' ? null : req,
    });
    const out: any = {};
    for (const [k, v] of Object.entries(r.headers))
      if (k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding') out[k] = v;
    res.writeHead(r.statusCode, out);
    for await (const c of r.body) res.write(c);
    res.end();
  })
  .listen(0);
await new Promise((r) => bare.once('listening', r));
const proxy = await startTestProxy(
  bootstrapJson({
    staticClusters: [staticCluster('app', [['127.0.0.1', app.port]])],
    staticListeners: [
      listener('l', 0, { accessLog: false, routeConfig: routeConfig('l', [vhost('v', ['*'], [route('/', 'app')])]) }),
    ],
  }),
);
await proxy.server.live;
const run = (port: number, d = 5) =>
  new Promise<any>((res) =>
    autocannon(
      { url: `http://127.0.0.1:${port}/headers`, connections: 50, duration: d, headers: { host: 'www.example.com' } },
      (e, r) => res(r),
    ),
  );
for (const [name, port] of [
  ['direct', app.port],
  ['bare', (bare.address() as any).port],
  ['proxy', proxy.port('l')],
] as const) {
  await run(port as number, 1);
  const r = await run(port as number);
  console.log(
    name,
    Math.round(r.requests.average),
    'p50',
    r.latency.p50,
    'p99',
    r.latency.p99,
    'err',
    r.errors,
    r.non2xx,
  );
}
await proxy.close();
bare.close();
await app.close();
process.exit(0);
