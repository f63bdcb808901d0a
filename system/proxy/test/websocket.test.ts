// WebSocket upgrades through the proxy, against what Envoy does (docs intro/arch_overview/http/upgrades; source/
// common/http/conn_manager_impl.cc and filter_manager.cc createUpgradeFilterChain; router.cc, which starts the route
// timeout only once the request is complete): the HCM's upgrade_configs allow `websocket`, the 101 goes downstream
// and frames flow both ways until either side closes; without a config (or a route's `enabled: false`) the upgrade is
// 403 with `downstream_rq_ws_on_non_ws_route`; a route's own entry enables it where the HCM has none; an upstream
// that refuses the upgrade has its answer relayed; the route timeout bounds the wait for the 101 (504 UT, as Envoy
// since envoyproxy/envoy#41075) but does not cut a tunnel, its idle_timeout does (flag SI); stats
// downstream_cx_upgrades_total/_active; unsupported upgrade_configs fields NACKed.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  cla,
  edsCluster,
  eventually,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';

type J = Record<string, any>;

const LISTENER = 'listener~ws';
let fx: XdsFixture;
let wss: WebSocketServer;
let upstreamPort: number;
const seen: http.IncomingHttpHeaders[] = [];

/** The listener's HCM with `hcm` merged in, one route to the upstream (its action `ws` merged in, or it if weighted). */
async function configure(hcm: J, ws: J = {}) {
  const res = await fx.apply({
    clusters: [edsCluster('wsup')],
    endpoints: [cla('wsup', [['127.0.0.1', upstreamPort]])],
    listeners: [listener(LISTENER, 0, { rds: LISTENER, hcm })],
    routes: [
      routeConfig(LISTENER, [
        vhost(
          'ws',
          ['*'],
          [ws.weighted_clusters ? { match: { prefix: '/' }, route: ws } : route('/', 'wsup', { route: ws })],
        ),
      ]),
    ],
  });
  return res.nacks.map((n) => n.error_detail?.message);
}

const stat = (name: string) => fx.proxy.server.stats.value(`http.http.${name}`) ?? 0;

interface Opened {
  ws: WebSocket;
  status: number;
  headers: http.IncomingHttpHeaders;
}

/** Opens a WebSocket through the proxy; resolves with the socket (101) or the status of the refusal. */
function open(path = '/ws'): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${fx.proxy.port(LISTENER)}${path}`, { origin: 'http://gateway' });
    ws.once('upgrade', (res) => resolve({ ws, status: res.statusCode ?? 0, headers: res.headers }));
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      resolve({ ws, status: res.statusCode ?? 0, headers: res.headers });
    });
    ws.once('error', (err) => reject(err));
  });
}

function echoOnce(ws: WebSocket, data: string | Buffer): Promise<{ data: Buffer; binary: boolean }> {
  return new Promise((resolve) => {
    ws.once('message', (d, binary) => resolve({ data: d as Buffer, binary }));
    ws.send(data, { binary: typeof data !== 'string' });
  });
}

function closed(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) resolve(1006);
    else ws.once('close', (code) => resolve(code));
  });
}

beforeAll(async () => {
  wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    // /refuse: 401; /slow: the 101 comes after 1.5 s.
    verifyClient: (info: { req: http.IncomingMessage }, done: (ok: boolean) => void) => {
      seen.push(info.req.headers);
      if (info.req.url?.startsWith('/slow')) setTimeout(() => done(true), 1500);
      else done(!info.req.url?.startsWith('/refuse'));
    },
  });
  await new Promise((r) => wss.once('listening', r));
  upstreamPort = (wss.address() as AddressInfo).port;
  wss.on('connection', (ws) => ws.on('message', (d, binary) => ws.send(d, { binary })));
  fx = await startXdsFixture();
  expect(await configure({})).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  for (const c of wss?.clients ?? []) c.terminate();
  if (wss) await new Promise((r) => wss.close(r));
});

describe('WebSocket upgrades (upgrade_configs)', () => {
  it('tunnels a WebSocket when the HCM allows websocket: 101, frames both ways, upgrade stats', async () => {
    expect(await configure({ upgrade_configs: [{ upgrade_type: 'websocket' }] })).toEqual([]);
    const total = stat('downstream_cx_upgrades_total');
    const { ws, status } = await open();
    expect(status).toBe(101);
    const text = await echoOnce(ws, 'Websocket Support!');
    expect({ text: text.data.toString(), binary: text.binary }).toEqual({ text: 'Websocket Support!', binary: false });
    const bin = await echoOnce(ws, Buffer.from([1, 2, 3, 4, 5, 6, 7]));
    expect({ bytes: [...bin.data], binary: bin.binary }).toEqual({ bytes: [1, 2, 3, 4, 5, 6, 7], binary: true });
    expect(stat('downstream_cx_upgrades_total')).toBe(total + 1);
    expect(stat('downstream_cx_upgrades_active')).toBe(1);
    // What the upstream got: the Upgrade and Connection headers, and the proxy's own.
    const h = seen.at(-1)!;
    expect(h.upgrade).toBe('websocket');
    expect(h.connection).toBe('Upgrade');
    expect(h['x-forwarded-proto']).toBe('http');
    expect(h['x-request-id']).toBeTruthy();
    ws.close(1000);
    expect(await closed(ws)).toBe(1000);
    await eventually(() => stat('downstream_cx_upgrades_active') === 0, 5000, 'the tunnel closed');
    await eventually(() => / 101 /.test(fx.proxy.access.at(-1) ?? ''), 5000, 'the access log line');
    // Envoy's default format: the tunnel's bytes each way count as the request's.
    expect(fx.proxy.access.at(-1)).toMatch(/"GET \/ws HTTP\/1.1" 101 - [1-9]\d* [1-9]\d* /);
  });

  it('refuses an upgrade nothing allows: 403 upgrade_failed, downstream_rq_ws_on_non_ws_route, upstream not asked', async () => {
    expect(await configure({})).toEqual([]);
    const before = { refused: stat('downstream_rq_ws_on_non_ws_route'), seen: seen.length };
    const { status } = await open();
    expect(status).toBe(403);
    expect(stat('downstream_rq_ws_on_non_ws_route')).toBe(before.refused + 1);
    expect(seen.length).toBe(before.seen);
    await eventually(() => / 403 /.test(fx.proxy.access.at(-1) ?? ''), 5000, 'the access log line');
    expect(fx.proxy.access.at(-1)).toMatch(/"GET \/ws HTTP\/1.1" 403 - 0 0 /);
  });

  it("lets a route's upgrade_configs decide: enabled where the HCM has none, disabled over the HCM's", async () => {
    expect(await configure({}, { upgrade_configs: [{ upgrade_type: 'WebSocket' }] })).toEqual([]);
    const on = await open();
    expect(on.status).toBe(101);
    on.ws.close();
    expect(
      await configure(
        { upgrade_configs: [{ upgrade_type: 'websocket' }] },
        { upgrade_configs: [{ upgrade_type: 'websocket', enabled: false }] },
      ),
    ).toEqual([]);
    expect((await open()).status).toBe(403);
    expect(await configure({ upgrade_configs: [{ upgrade_type: 'websocket', enabled: false }] })).toEqual([]);
    expect((await open()).status).toBe(403);
  });

  it("applies a weighted cluster's header mutations and host rewrite (HTTPRoute backendRef filters) to the upgrade", async () => {
    const weighted = {
      weighted_clusters: {
        clusters: [
          {
            name: 'wsup',
            weight: 1,
            host_rewrite_literal: 'backend.example.com',
            request_headers_to_add: [{ header: { key: 'x-backend', value: 'wsup' } }],
            response_headers_to_add: [{ header: { key: 'x-via-backend', value: 'wsup' } }],
          },
        ],
      },
    };
    expect(await configure({ upgrade_configs: [{ upgrade_type: 'websocket' }] }, weighted)).toEqual([]);
    const { ws, status, headers } = await open();
    expect(status).toBe(101);
    expect(headers['x-via-backend']).toBe('wsup');
    expect(seen.at(-1)).toMatchObject({ 'x-backend': 'wsup', host: 'backend.example.com' });
    ws.close();
  });

  it("relays the upstream's refusal of the upgrade as its response", async () => {
    expect(await configure({ upgrade_configs: [{ upgrade_type: 'websocket' }] })).toEqual([]);
    expect((await open('/refuse')).status).toBe(401);
  });

  it('does not cut a tunnel at the route timeout (disarmed by the 101); the route idle_timeout does (SI)', async () => {
    expect(
      await configure({ upgrade_configs: [{ upgrade_type: 'websocket' }] }, { timeout: '0.2s', idle_timeout: '1s' }),
    ).toEqual([]);
    const { ws } = await open();
    // Messages keep the tunnel busy past the 0.2 s route timeout.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 150));
      expect((await echoOnce(ws, `m${i}`)).data.toString()).toBe(`m${i}`);
    }
    const idle = stat('downstream_rq_idle_timeout');
    expect(await closed(ws)).toBe(1006);
    expect(stat('downstream_rq_idle_timeout')).toBe(idle + 1);
    await eventually(() => / 101 SI /.test(fx.proxy.access.at(-1) ?? ''), 5000, 'the access log line');
  });

  it('bounds the wait for the 101 by the route timeout: 504 upstream request timeout (UT) when none comes in time', async () => {
    expect(
      await configure({ upgrade_configs: [{ upgrade_type: 'websocket' }] }, { timeout: '0.3s', idle_timeout: '0s' }),
    ).toEqual([]);
    const timeouts = fx.proxy.server.stats.value('cluster.wsup.upstream_rq_timeout') ?? 0;
    expect((await open('/slow')).status).toBe(504);
    expect(fx.proxy.server.stats.value('cluster.wsup.upstream_rq_timeout')).toBe(timeouts + 1);
    await eventually(() => / 504 UT /.test(fx.proxy.access.at(-1) ?? ''), 5000, 'the access log line');
    // A longer timeout lets the slow 101 through; the tunnel then outlives it.
    expect(await configure({ upgrade_configs: [{ upgrade_type: 'websocket' }] }, { timeout: '3s' })).toEqual([]);
    const slow = await open('/slow');
    expect(slow.status).toBe(101);
    await new Promise((r) => setTimeout(r, 3500));
    expect((await echoOnce(slow.ws, 'still here')).data.toString()).toBe('still here');
    slow.ws.close();
  });

  it('NACKs upgrade_configs it cannot run, in the HCM and in a route', async () => {
    expect(
      await configure({ upgrade_configs: [{ upgrade_type: 'websocket', filters: [{ name: 'x', typed_config: {} }] }] }),
    ).toEqual([expect.stringContaining('upgrade_configs[0].filters: upgrade filter chains are not supported')]);
    expect(await configure({}, { upgrade_configs: [{ upgrade_type: 'CONNECT', connect_config: {} }] })).toEqual([
      expect.stringContaining('upgrade_configs[0].connect_config: CONNECT termination is not supported'),
    ]);
  });
});
