// The xDS client against the test ADS server: first config, ACKs with nonces and versions, warming, updates,
// NACKs that keep the previous config serving, and a control plane that goes away and comes back.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import {
  bootstrapJson,
  cla,
  edsCluster,
  eventually,
  HCM_TYPE,
  httpRequest,
  listener,
  ROUTER,
  route,
  routeConfig,
  startTestProxy,
  type TestProxy,
  vhost,
} from '../testing/harness.ts';
import { startTestXdsServer, type TestXdsServer } from '../testing/xds-server.ts';

type J = Record<string, any>;

const APP = 'kube_sampleapp_sampleapp_8000';
const L = 'listener~8080';
let app: SampleApp;
let app2: SampleApp;
let xds: TestXdsServer;
let proxy: TestProxy;

function snapshot(o: { routes?: J[]; endpointsPort?: number; listeners?: J[] } = {}) {
  return {
    clusters: [edsCluster(APP)],
    endpoints: [cla(APP, [['127.0.0.1', o.endpointsPort ?? app.port]])],
    listeners: o.listeners ?? [listener(L, 0, { rds: L })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], o.routes ?? [route('/', APP)])])],
  };
}

const get = (path: string) => httpRequest(`http://127.0.0.1:${proxy.port(L)}${path}`, { host: 'www.example.com' });
const stat = (n: string) => proxy.server.stats.value(n) ?? 0;

async function dump(q = ''): Promise<J> {
  const r = await proxy.admin(`/config_dump${q}`);
  expect(r.status).toBe(200);
  return JSON.parse(r.body);
}

function section(d: J, name: string): J {
  return d.configs.find((c: J) => c['@type'] === `type.googleapis.com/envoy.admin.v3.${name}`);
}

function ack(type: string, version: string, from = 0) {
  return xds.waitFor((r) => r.type_url === type && r.kind === 'ack' && r.version_info === version, 10_000, from);
}

beforeAll(async () => {
  [app, app2] = await Promise.all([startSampleApp(), startSampleApp()]);
  xds = await startTestXdsServer();
  proxy = await startTestProxy(bootstrapJson({ xdsPort: xds.port }));
});

afterAll(async () => {
  await proxy?.close();
  await xds?.close();
  await Promise.all([app?.close(), app2?.close()]);
});

describe('first config', () => {
  it('is not ready until the first config arrived', async () => {
    await xds.waitFor((r) => r.type_url === TYPE_URL.cluster);
    const r = await proxy.admin('/ready');
    expect(r.status).toBe(503);
    expect(r.body).toBe('INITIALIZING\n');
    expect(proxy.server.stats.value('server.live')).toBe(0);
  });

  it('subscribes to CDS and LDS by wildcard, with the node on the first request', async () => {
    const cds = await xds.waitFor((r) => r.type_url === TYPE_URL.cluster);
    expect(cds).toMatchObject({ kind: 'initial', version_info: '', response_nonce: '', resource_names: [] });
    expect(cds.node?.id).toBe('gw-0.gwvendor-system');
    expect(cds.node?.cluster).toBe('gw.gwvendor-system');
    expect(cds.node?.metadata?.role).toBe('gwvendor-kube-gateway-api~gwvendor-system~gw');
    expect(cds.node?.user_agent_name).toBe('envoy');
    const lds = await xds.waitFor((r) => r.type_url === TYPE_URL.listener);
    expect(lds).toMatchObject({ kind: 'initial', resource_names: [] });
  });

  it('ACKs every type with the response nonce and version, asks EDS and RDS by name, then serves GET /headers', async () => {
    xds.setSnapshot('1', snapshot());
    for (const t of [TYPE_URL.cluster, TYPE_URL.clusterLoadAssignment, TYPE_URL.listener, TYPE_URL.routeConfiguration])
      await ack(t, '1');
    const eds = await xds.waitFor((r) => r.type_url === TYPE_URL.clusterLoadAssignment && r.kind === 'initial');
    expect(eds.resource_names).toEqual([APP]);
    const rds = await xds.waitFor((r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'initial');
    expect(rds.resource_names).toEqual([L]);
    await proxy.server.live;
    expect((await proxy.admin('/ready')).body).toBe('LIVE\n');
    const r = await get('/headers');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).headers.Host).toEqual(['www.example.com']);
    expect(stat('control_plane.connected_state')).toBe(1);
    expect(stat('cluster_manager.cds.update_success')).toBeGreaterThanOrEqual(1);
    expect(stat('listener_manager.lds.update_success')).toBeGreaterThanOrEqual(1);
  });
});

describe('updates', () => {
  it('route updates take effect', async () => {
    const from = xds.requests.length;
    xds.setSnapshot(
      '2',
      snapshot({
        routes: [{ match: { prefix: '/' }, direct_response: { status: 299, body: { inline_string: 'v2' } } }],
      }),
    );
    await ack(TYPE_URL.routeConfiguration, '2', from);
    const r = await get('/anything');
    expect(r.status).toBe(299);
    expect(r.body).toBe('v2');
  });

  it('cluster and endpoint updates take effect', async () => {
    const from = xds.requests.length;
    xds.setSnapshot('3', snapshot({ endpointsPort: app2.port }));
    await ack(TYPE_URL.clusterLoadAssignment, '3', from);
    await ack(TYPE_URL.routeConfiguration, '3', from);
    expect((await get('/headers')).status).toBe(200);
    const d = await dump('?include_eds');
    const eds = section(d, 'EndpointsConfigDump');
    const ep =
      eds.dynamic_endpoint_configs[0].endpoint_config.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
    expect(ep.port_value).toBe(app2.port);
  });

  it('a listener warms until its RouteConfiguration arrives; a cluster warms until its endpoints arrive', async () => {
    const from = xds.requests.length;
    xds.set(TYPE_URL.cluster, '4', [edsCluster(APP), edsCluster('late')]);
    xds.set(TYPE_URL.listener, '4', [listener(L, 0, { rds: L }), listener('listener~late', 0, { rds: 'late-routes' })]);
    await ack(TYPE_URL.listener, '4', from);
    await ack(TYPE_URL.cluster, '4', from);
    const d = await dump();
    const listeners = section(d, 'ListenersConfigDump');
    const late = listeners.dynamic_listeners.find((l: J) => l.name === 'listener~late');
    expect(late.warming_state.listener.name).toBe('listener~late');
    expect(late.active_state).toBeUndefined();
    const clusters = section(d, 'ClustersConfigDump');
    expect(clusters.dynamic_warming_clusters.map((c: J) => c.cluster.name)).toEqual(['late']);
    expect((await proxy.admin('/listeners')).body).not.toContain('listener~late');
    // Routes and endpoints arrive: both become active.
    xds.set(TYPE_URL.routeConfiguration, '5', [
      routeConfig(L, [vhost('www', ['www.example.com'], [route('/', APP)])]),
      routeConfig('late-routes', [vhost('any', ['*'], [route('/', 'late')])]),
    ]);
    xds.set(TYPE_URL.clusterLoadAssignment, '5', [
      cla(APP, [['127.0.0.1', app.port]]),
      cla('late', [['127.0.0.1', app2.port]]),
    ]);
    await ack(TYPE_URL.routeConfiguration, '5', from);
    await ack(TYPE_URL.clusterLoadAssignment, '5', from);
    await eventually(
      async () => (await proxy.admin('/listeners')).body.includes('listener~late'),
      5000,
      'listener~late active',
    );
    const r = await httpRequest(`http://127.0.0.1:${proxy.port('listener~late')}/status/201`, { host: 'whatever' });
    expect(r.status).toBe(201);
    const d2 = await dump();
    expect(section(d2, 'ClustersConfigDump').dynamic_warming_clusters ?? []).toEqual([]);
  });

  it('removing a listener closes its port; removing a cluster answers 503 NC', async () => {
    const latePort = proxy.port('listener~late');
    const from = xds.requests.length;
    xds.set(TYPE_URL.listener, '6', [listener(L, 0, { rds: L })]);
    xds.set(TYPE_URL.cluster, '6', [edsCluster(APP)]);
    await ack(TYPE_URL.listener, '6', from);
    await ack(TYPE_URL.cluster, '6', from);
    await eventually(
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(latePort, '127.0.0.1');
          s.once('connect', () => {
            s.destroy();
            resolve(false);
          });
          s.once('error', () => resolve(true));
        }),
      5000,
      'port closed',
    );
    const rds = await xds.waitFor(
      (r) => r.type_url === TYPE_URL.routeConfiguration && r.resource_names.length === 1,
      5000,
      from,
    );
    expect(rds.resource_names).toEqual([L]);
  });
});

describe('NACKs keep the last good config serving', () => {
  it('a regex RE2 rejects: NACK with the previous version and error_detail; error_state; config warning', async () => {
    expect((await get('/headers')).status).toBe(200);
    const from = xds.requests.length;
    const rejectedBefore = stat(`http.http.rds.${L}.update_rejected`);
    xds.set(TYPE_URL.routeConfiguration, '7', [
      routeConfig(L, [
        vhost('www', ['www.example.com'], [{ match: { safe_regex: { regex: '/(?=x)' } }, route: { cluster: APP } }]),
      ]),
    ]);
    const nack = await xds.waitFor(
      (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'nack',
      10_000,
      from,
    );
    expect(nack.version_info).toBe('5');
    expect(nack.error_detail?.code).toBe(13);
    expect(nack.error_detail?.message).toContain("Invalid regex '/(?=x)'");
    expect(nack.error_detail?.message).toContain('invalid or unsupported Perl syntax');
    expect((await get('/headers')).status).toBe(200);
    const d = await dump();
    const routes = section(d, 'RoutesConfigDump');
    const rc = routes.dynamic_route_configs.find((c: J) => c.route_config?.name === L);
    expect(rc.client_status).toBe('NACKED');
    expect(rc.version_info).toBe('5');
    expect(rc.error_state.details).toContain('Invalid regex');
    expect(rc.error_state.version_info).toBe('7');
    expect(rc.error_state.failed_configuration['@type']).toBe(TYPE_URL.routeConfiguration);
    expect(rc.error_state.last_update_attempt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(
      proxy.logs.some((l) =>
        /\]\[warning\]\[config\] \[[^\]]+\] gRPC config for type\.googleapis\.com\/envoy\.config\.route\.v3\.RouteConfiguration rejected: .*Invalid regex/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(stat(`http.http.rds.${L}.update_rejected`)).toBe(rejectedBefore + 1);
  });

  it('an unknown filter type in a listener: NACK, error_state on the listener, old listener serving', async () => {
    const from = xds.requests.length;
    const bad = listener(L, 0, { rds: L });
    bad.filter_chains[0].filters[0].typed_config.http_filters = [
      {
        name: 'envoy.filters.http.lua',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua' },
      },
      ROUTER,
    ];
    xds.set(TYPE_URL.listener, '8', [bad]);
    const nack = await xds.waitFor((r) => r.type_url === TYPE_URL.listener && r.kind === 'nack', 10_000, from);
    expect(nack.version_info).toBe('6');
    expect(nack.error_detail?.message).toContain(
      "Didn't find a registered implementation for 'envoy.filters.http.lua' with type URL: 'envoy.extensions.filters.http.lua.v3.Lua'",
    );
    expect((await get('/headers')).status).toBe(200);
    const d = await dump('?resource=dynamic_listeners');
    const l = d.configs.find((c: J) => c.name === L);
    expect(l['@type']).toBe('type.googleapis.com/envoy.admin.v3.ListenersConfigDump.DynamicListener');
    expect(l.client_status).toBe('NACKED');
    // Envoy keeps the version at which the listener was last (re)loaded: it has not changed since version 1.
    expect(l.active_state.version_info).toBe('1');
    expect(l.error_state.details).toContain("Didn't find a registered implementation");
    expect(stat('listener_manager.lds.update_rejected')).toBeGreaterThanOrEqual(1);
  });

  it("a constraint of the protos (protoc-gen-validate): NACK in Envoy's words", async () => {
    const from = xds.requests.length;
    xds.set(TYPE_URL.routeConfiguration, '7b', [routeConfig(L, [vhost('www', [], [route('/', APP)])])]);
    const nack = await xds.waitFor(
      (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'nack',
      10_000,
      from,
    );
    expect(nack.error_detail?.message).toBe(
      `${L}: Proto constraint validation failed (RouteConfigurationValidationError.VirtualHosts[0]: embedded message failed validation | caused by VirtualHostValidationError.Domains: value must contain at least 1 item(s))`,
    );
    expect((await get('/headers')).status).toBe(200);
  });

  it('a listener port in use: NACK with "cannot bind"', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const busy = (blocker.address() as net.AddressInfo).port;
    try {
      const from = xds.requests.length;
      xds.set(TYPE_URL.listener, '9', [listener(L, 0, { rds: L }), listener('listener~busy', busy, { rds: L })]);
      const nack = await xds.waitFor((r) => r.type_url === TYPE_URL.listener && r.kind === 'nack', 10_000, from);
      expect(nack.error_detail?.message).toContain(`cannot bind '127.0.0.1:${busy}': Address already in use`);
      expect((await get('/headers')).status).toBe(200);
    } finally {
      blocker.close();
    }
  });

  it('a good update after NACKs is ACKed and clears error_state', async () => {
    const from = xds.requests.length;
    xds.setSnapshot('10', snapshot());
    await ack(TYPE_URL.listener, '10', from);
    await ack(TYPE_URL.routeConfiguration, '10', from);
    const d = await dump();
    const listeners = section(d, 'ListenersConfigDump');
    expect(listeners.version_info).toBe('10');
    expect(listeners.dynamic_listeners.every((l: J) => l.client_status === 'ACKED' && !l.error_state)).toBe(true);
  });
});

/** The time an Envoy-format log line carries (`[2026-05-19 07:37:58.089]...`), in ms. */
function lineTime(line: string): number {
  const m = /^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})\]/.exec(line);
  if (!m) throw new Error(`no timestamp in ${line}`);
  return new Date(`${m[1]}T${m[2]}`).getTime();
}

const STREAM_CLOSED = /\]\[warning\]\[config\] .*StreamAggregatedResources gRPC config stream to xds_cluster closed/;
const RETRYING = /\]\[debug\]\[config\] .*gRPC config stream to xds_cluster: retrying in (\d+)ms/;

describe('control plane gone', () => {
  // startTestProxy's ADS back-off: 50 ms base, 500 ms cap (Envoy's 500 ms .. 30 s, scaled down for a test). Each
  // wait is drawn at random below a ceiling of base·2^attempt, capped (full jitter, as Envoy's
  // JitteredExponentialBackOffStrategy); a stream that gets an answer resets it.
  const BASE = 50;
  const MAX = 500;
  const ceiling = (k: number) => Math.min(MAX, BASE * 2 ** k);

  it('keeps serving while reconnect attempts back off (growing, bounded), then reconnects and resyncs', async () => {
    expect((await proxy.admin('/logging?config=debug', 'POST')).status).toBe(200);
    const from = proxy.logs.length;
    const port = xds.port;
    await xds.close();
    await eventually(() => stat('control_plane.connected_state') === 0, 5000, 'disconnected');
    // Down for 3 s: the last good config serves every request meanwhile.
    const statuses: number[] = [];
    const downUntil = Date.now() + 3000;
    while (Date.now() < downUntil) {
      statuses.push((await get('/headers')).status);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const lines = proxy.logs.slice(from);
    const closedAt = lines.filter((l) => STREAM_CLOSED.test(l)).map(lineTime);
    const waits = lines.map((l) => RETRYING.exec(l)).flatMap((m) => (m ? [Number(m[1])] : []));
    // One wait announced per failed attempt; with the cap at 500 ms, 3 s hold well over 6 attempts.
    expect(waits.length).toBeGreaterThanOrEqual(6);
    expect(closedAt.length).toBe(waits.length);
    // Bounded and growing: the k-th wait stays under its ceiling (50, 100, 200, 400, then the 500 ms cap)...
    waits.forEach((w, k) => {
      expect(w, `wait ${k}`).toBeGreaterThanOrEqual(10);
      expect(w, `wait ${k}`).toBeLessThanOrEqual(ceiling(k));
    });
    // ...and the ceiling did grow: from the 5th attempt on, waits above twice the base (impossible if it had stayed
    // at 50 or 100 ms; with a 500 ms ceiling each wait is ≤ 100 ms with probability 1/5, so all of them only once
    // in 5^(n-4)).
    expect(Math.max(...waits.slice(4))).toBeGreaterThan(2 * BASE);
    // The attempts are spaced by those waits: the next attempt fails no sooner than the wait (log times are whole
    // ms, hence the 1 ms), and soon after it (a refused connection fails at once; the slack is for a busy machine: 250 ms
    // was exceeded twice in ~20 runs at load 7-10 on 2 cores, and a bound well under the 500 ms cap proves nothing more).
    for (let k = 0; k + 1 < closedAt.length; k++) {
      const gap = closedAt[k + 1]! - closedAt[k]!;
      expect(gap, `gap after attempt ${k}`).toBeGreaterThanOrEqual(waits[k]! - 1);
      expect(gap, `gap after attempt ${k}`).toBeLessThanOrEqual(waits[k]! + 1000);
    }
    // Still trying at the end of the outage (no giving up): the last attempt is at most one capped wait old.
    expect(Date.now() - closedAt.at(-1)!).toBeLessThan(MAX + 500);
    // Envoy's warning counts the time since the stream was lost (code 14: UNAVAILABLE).
    const since = lines
      .filter((l) => STREAM_CLOSED.test(l))
      .map((l) => Number(/closed(?: since (\d+)s ago)?: 14, /.exec(l)?.[1] ?? 0));
    expect(since).toEqual([...since].sort((x, y) => x - y));
    expect(since.at(-1)).toBeGreaterThanOrEqual(2);

    // A new control plane on the same address, with a newer config.
    xds = await startTestXdsServer(port);
    xds.setSnapshot(
      '11',
      snapshot({
        routes: [{ match: { prefix: '/' }, direct_response: { status: 203, body: { inline_string: 'resynced' } } }],
      }),
    );
    const cds = await xds.waitFor((r) => r.type_url === TYPE_URL.cluster, 10_000);
    // The re-subscription carries the last accepted version.
    expect(cds.version_info).toBe('10');
    expect(cds.response_nonce).toBe('');
    await ack(TYPE_URL.routeConfiguration, '11');
    const r = await get('/x');
    expect(r.status).toBe(203);
    expect(r.body).toBe('resynced');
    expect(stat('control_plane.connected_state')).toBe(1);

    // The answered stream reset the back-off: the next outage starts again from the base.
    const from2 = proxy.logs.length;
    await xds.close();
    const first = await eventually(
      () =>
        proxy.logs
          .slice(from2)
          .map((l) => RETRYING.exec(l))
          .find((m) => m),
      5000,
      'a retry after the second outage',
    );
    expect(Number(first[1])).toBeLessThanOrEqual(BASE);
    xds = await startTestXdsServer(port);
    xds.setSnapshot(
      '11',
      snapshot({
        routes: [{ match: { prefix: '/' }, direct_response: { status: 203, body: { inline_string: 'resynced' } } }],
      }),
    );
    await ack(TYPE_URL.routeConfiguration, '11');
    expect((await proxy.admin('/logging?config=info', 'POST')).status).toBe(200);
  });
});

describe('inline routes in an LDS listener', () => {
  it('serve without RDS, and show up as static route configs', async () => {
    const from = xds.requests.length;
    const inline = listener('listener~inline', 0, {
      routeConfig: routeConfig('inline-routes', [
        vhost(
          'all',
          ['*'],
          [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'inline' } } }],
        ),
      ]),
    });
    xds.set(TYPE_URL.listener, '12', [listener(L, 0, { rds: L }), inline]);
    await ack(TYPE_URL.listener, '12', from);
    await eventually(
      async () => (await proxy.admin('/listeners')).body.includes('listener~inline'),
      5000,
      'inline listener',
    );
    const r = await httpRequest(`http://127.0.0.1:${proxy.port('listener~inline')}/`, { host: 'a' });
    expect(r.body).toBe('inline');
    const d = await dump('?resource=static_route_configs');
    expect(d.configs.map((c: J) => c.route_config.name)).toContain('inline-routes');
    expect(HCM_TYPE).toContain('HttpConnectionManager');
  });
});
