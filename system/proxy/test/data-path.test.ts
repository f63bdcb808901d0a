// The HTTP data path end to end: one proxy fed by the test xDS server, the sample application and scriptable
// upstreams. Each test pushes the routes and clusters it needs and waits for the proxy's ACK.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import {
  cla,
  edsCluster,
  eventually,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';
import { closedPort, startTestUpstream, type TestUpstream } from '../testing/upstream.ts';

type J = Record<string, any>;

const APP = 'kube_sampleapp_sampleapp_8000';
let app: SampleApp;
let up1: TestUpstream;
let up2: TestUpstream;
let fx: XdsFixture;
let port: number;

const LISTENER = 'listener~8080';

function baseClusters(extra: J[] = []): J[] {
  return [edsCluster(APP), edsCluster('up1'), edsCluster('up2'), edsCluster('both'), ...extra];
}
function baseEndpoints(extra: J[] = []): J[] {
  return [
    cla(APP, [['127.0.0.1', app.port]]),
    cla('up1', [['127.0.0.1', up1.port]]),
    cla('up2', [['127.0.0.1', up2.port]]),
    cla('both', [
      ['127.0.0.1', up1.port],
      ['127.0.0.1', up2.port],
    ]),
    ...extra,
  ];
}

/** Pushes a listener (HCM options) and one virtual host for www.example.com with the given routes. */
async function routes(
  rs: J[],
  o: { hcm?: J; filters?: J[]; clusters?: J[]; endpoints?: J[]; vhostExtra?: J; extraVhosts?: J[]; rcExtra?: J } = {},
) {
  const res = await fx.apply({
    clusters: baseClusters(o.clusters),
    endpoints: baseEndpoints(o.endpoints),
    listeners: [listener(LISTENER, 0, { rds: LISTENER, hcm: o.hcm, filters: o.filters })],
    routes: [
      {
        ...routeConfig(LISTENER, [vhost('www', ['www.example.com'], rs, o.vhostExtra), ...(o.extraVhosts ?? [])]),
        ...o.rcExtra,
      },
    ],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  port = fx.proxy.port(LISTENER);
}

function get(
  path: string,
  o: { host?: string; headers?: Record<string, string>; method?: string; body?: string } = {},
) {
  return httpRequest(`http://127.0.0.1:${port}${path}`, {
    host: o.host ?? 'www.example.com',
    headers: o.headers,
    method: o.method,
    body: o.body,
  });
}

const stat = (name: string) => fx.proxy.server.stats.value(name) ?? 0;
const lastAccess = () => fx.proxy.access.at(-1) ?? '';

beforeAll(async () => {
  [app, up1, up2] = await Promise.all([startSampleApp(), startTestUpstream('up1'), startTestUpstream('up2')]);
  fx = await startXdsFixture();
  await routes([route('/', APP)]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([app?.close(), up1?.close(), up2?.close()]);
});

describe('request and response headers, as Envoy sets them', () => {
  it('GET /headers through the sample application: 200 with the right Host and Envoy headers', async () => {
    await routes([route('/', APP)]);
    const r = await get('/headers', { headers: { 'user-agent': 'curl/8.5.0' } });
    expect(r.status).toBe(200);
    const seen = JSON.parse(r.body).headers as Record<string, string[]>;
    expect(seen.Host).toEqual(['www.example.com']);
    expect(seen['X-Request-Id']![0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(seen['X-Forwarded-Proto']).toEqual(['http']);
    expect(seen['X-Envoy-Expected-Rq-Timeout-Ms']).toEqual(['15000']);
    expect(r.headers['x-envoy-upstream-service-time']).toMatch(/^\d+$/);
    expect(r.headers.server).toBe('envoy');
    expect(r.headers.date).toBeTruthy();
    expect(r.headers['content-type']).toMatch(/json/);
    expect(r.headers['access-control-allow-origin']).toBe('*');
  });

  it('keeps an incoming x-request-id; appends x-forwarded-for with use_remote_address', async () => {
    await routes([route('/', 'up1')], { hcm: { use_remote_address: true, preserve_external_request_id: true } });
    const r = await get('/echo', { headers: { 'x-request-id': 'given-id', 'x-forwarded-for': '10.1.2.3' } });
    const h = JSON.parse(r.body).headers;
    expect(h['x-request-id']).toBe('given-id');
    expect(h['x-forwarded-for']).toBe('10.1.2.3,127.0.0.1');
    expect(h['x-envoy-external-address']).toBe('127.0.0.1');
    await routes([route('/', 'up1')]);
    const r2 = await get('/echo', { headers: { 'x-forwarded-for': '10.1.2.3' } });
    // Without use_remote_address Envoy leaves x-forwarded-for alone.
    expect(JSON.parse(r2.body).headers['x-forwarded-for']).toBe('10.1.2.3');
  });

  it('a Host with :port matches only with strip_any_host_port (and the stripped Host goes upstream)', async () => {
    await routes([route('/', 'up1')]);
    const r = await get('/echo', { host: 'www.example.com:8080' });
    expect(r.status).toBe(404);
    expect(lastAccess()).toContain(' 404 NR ');
    await routes([route('/', 'up1')], { hcm: { strip_any_host_port: true } });
    const r2 = await get('/echo', { host: 'www.example.com:8080' });
    expect(r2.status).toBe(200);
    expect(JSON.parse(r2.body).headers.host).toBe('www.example.com');
  });

  it('ignore_port_in_host_matching: a Host with :port picks its virtual host and goes upstream unchanged', async () => {
    await routes([route('/', 'up1')], { rcExtra: { ignore_port_in_host_matching: true } });
    const r = await get('/echo', { host: 'www.example.com:8080' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).headers.host).toBe('www.example.com:8080');
    expect((await get('/echo', { host: 'other.example.com:8080' })).status).toBe(404);
    // An IPv6 literal without a port is not cut at its last colon.
    expect((await get('/echo', { host: '[::1]' })).status).toBe(404);
  });

  it('strip_matching_host_port strips only the listener port', async () => {
    await routes([route('/', 'up1')], { hcm: { strip_matching_host_port: true } });
    expect((await get('/echo', { host: `www.example.com:${port}` })).status).toBe(200);
    expect((await get('/echo', { host: 'www.example.com:9999' })).status).toBe(404);
  });

  it('request and response header mutations at route, virtual host and route configuration level', async () => {
    await routes(
      [
        route('/', 'up1', {
          request_headers_to_add: [
            { header: { key: 'x-route', value: 'r' } },
            { header: { key: 'x-client', value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%' } },
          ],
          request_headers_to_remove: ['x-secret'],
          response_headers_to_add: [
            { header: { key: 'x-resp', value: 'added' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
          ],
          response_headers_to_remove: ['x-upstream'],
        }),
      ],
      { vhostExtra: { request_headers_to_add: [{ header: { key: 'x-vhost', value: 'v' } }] } },
    );
    const r = await get('/echo', { headers: { 'x-secret': 'hide' } });
    const h = JSON.parse(r.body).headers;
    expect(h['x-route']).toBe('r');
    expect(h['x-vhost']).toBe('v');
    expect(h['x-client']).toBe('127.0.0.1');
    expect(h['x-secret']).toBeUndefined();
    expect(r.headers['x-resp']).toBe('added');
    expect(r.headers['x-upstream']).toBeUndefined();
  });
});

describe('bodies', () => {
  it('streams chunked responses, binary bodies and request bodies both ways', async () => {
    await routes([route('/', APP)]);
    const stream = await get('/stream/5');
    expect(stream.status).toBe(200);
    expect(stream.body.trim().split('\n')).toHaveLength(5);
    const bytes = await get('/bytes/50000');
    expect(Buffer.byteLength(bytes.body, 'latin1')).toBeGreaterThan(0);
    expect(bytes.headers['content-length']).toBe('50000');
    const big = 'x'.repeat(200_000);
    const echo = await get('/anything', { method: 'POST', body: big, headers: { 'content-type': 'text/plain' } });
    expect(echo.status).toBe(200);
    expect(JSON.parse(echo.body).data).toHaveLength(200_000);
    const head = await get('/get', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });
});

describe('route actions', () => {
  it('prefix_rewrite and regex_rewrite, with x-envoy-original-path', async () => {
    await routes([
      route('/api/', 'up1', { route: { prefix_rewrite: '/v2/' } }),
      {
        match: { safe_regex: { regex: '/svc/([^/]+)/(.*)' } },
        route: {
          cluster: 'up1',
          regex_rewrite: { pattern: { regex: '^/svc/([^/]+)/(.*)$' }, substitution: '/\\2/of/\\1' },
        },
      },
    ]);
    const a = JSON.parse((await get('/api/items?x=1')).body);
    expect(a.url).toBe('/v2/items?x=1');
    expect(a.headers['x-envoy-original-path']).toBe('/api/items?x=1');
    const b = JSON.parse((await get('/svc/foo/bar/baz')).body);
    expect(b.url).toBe('/bar/baz/of/foo');
    expect(lastAccess()).toContain('"GET /svc/foo/bar/baz HTTP/1.1" 200');
  });

  it('host_rewrite_literal and cluster_header', async () => {
    await routes([
      route('/rewrite', 'up1', { route: { host_rewrite_literal: 'upstream.internal' } }),
      { match: { prefix: '/by-header' }, route: { cluster_header: 'x-cluster' } },
    ]);
    expect(JSON.parse((await get('/rewrite')).body).headers.host).toBe('upstream.internal');
    expect(JSON.parse((await get('/by-header', { headers: { 'x-cluster': 'up2' } })).body).name).toBe('up2');
    const missing = await get('/by-header', { headers: { 'x-cluster': 'nope' } });
    expect(missing.status).toBe(503);
    expect(missing.body).toBe('');
    expect(lastAccess()).toContain(' 503 NC ');
  });

  it('redirect and direct_response', async () => {
    await routes([
      { match: { path: '/old' }, redirect: { path_redirect: '/new' } },
      { match: { prefix: '/secure' }, redirect: { https_redirect: true, response_code: 'FOUND', strip_query: true } },
      {
        match: { prefix: '/elsewhere/' },
        redirect: { host_redirect: 'other.example.com', port_redirect: 8443, prefix_rewrite: '/there/' },
      },
      { match: { prefix: '/teapot' }, direct_response: { status: 418, body: { inline_string: 'short and stout' } } },
    ]);
    const a = await get('/old?keep=1');
    expect(a.status).toBe(301);
    expect(a.headers.location).toBe('http://www.example.com/new?keep=1');
    const b = await get('/secure/x?drop=1');
    expect(b.status).toBe(302);
    expect(b.headers.location).toBe('https://www.example.com/secure/x');
    const c = await get('/elsewhere/a/b');
    expect(c.headers.location).toBe('http://other.example.com:8443/there/a/b');
    const d = await get('/teapot');
    expect(d.status).toBe(418);
    expect(d.body).toBe('short and stout');
    expect(d.headers['content-type']).toBe('text/plain');
    expect(d.headers.server).toBe('envoy');
    expect(d.headers['x-envoy-upstream-service-time']).toBeUndefined();
  });

  it('weighted clusters split traffic by weight', async () => {
    await routes([
      {
        match: { prefix: '/' },
        route: {
          weighted_clusters: {
            clusters: [
              { name: 'up1', weight: 80 },
              { name: 'up2', weight: 20 },
            ],
          },
        },
      },
    ]);
    const counts: Record<string, number> = { up1: 0, up2: 0 };
    for (let i = 0; i < 200; i++) counts[JSON.parse((await get('/w')).body).name]!++;
    expect(counts.up1).toBeGreaterThan(130);
    expect(counts.up2).toBeGreaterThan(15);
  });

  it('request_mirror_policies send a copy to the shadow cluster with a -shadow host', async () => {
    await routes([route('/', 'up1', { route: { request_mirror_policies: [{ cluster: 'up2' }] } })]);
    const before = up2.received.length;
    const r = await get('/mirrored', { method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } });
    expect(JSON.parse(r.body).name).toBe('up1');
    await eventually(() => up2.received.length > before, 5000, 'mirror request');
    const copy = up2.received.at(-1)!;
    expect(copy.url).toBe('/mirrored');
    expect(copy.headers.host).toBe('www.example.com-shadow');
    expect(copy.body).toBe('payload');
  });
});

describe("local replies, exactly as Envoy's router sends them", () => {
  it('404 with an empty body when no route matches (NR)', async () => {
    await routes([route('/only', 'up1')]);
    const r = await get('/other');
    expect(r.status).toBe(404);
    expect(r.body).toBe('');
    expect(r.headers['content-length']).toBe('0');
    expect(r.headers.server).toBe('envoy');
    expect(lastAccess()).toMatch(
      /"GET \/other HTTP\/1\.1" 404 NR 0 0 \d+ - "-" "-" "[0-9a-f-]+" "www\.example\.com" "-"/,
    );
    const unknownHost = await get('/only', { host: 'nobody.example.org' });
    expect(unknownHost.status).toBe(404);
  });

  it('503 no healthy upstream (UH) when the cluster has no endpoints', async () => {
    await routes([route('/', 'empty')], { clusters: [edsCluster('empty')], endpoints: [cla('empty', [])] });
    const r = await get('/x');
    expect(r.status).toBe(503);
    expect(r.body).toBe('no healthy upstream');
    expect(r.headers['content-type']).toBe('text/plain');
    expect(lastAccess()).toContain(' 503 UH ');
    expect(stat('cluster.empty.upstream_cx_none_healthy')).toBeGreaterThan(0);
  });

  it('504 upstream request timeout (UT) after the route timeout', async () => {
    await routes([route('/', 'up1', { route: { timeout: '0.2s' } })]);
    const r = await get('/delay/2000');
    expect(r.status).toBe(504);
    expect(r.body).toBe('upstream request timeout');
    expect(lastAccess()).toContain(' 504 UT ');
    expect(stat('cluster.up1.upstream_rq_timeout')).toBeGreaterThan(0);
    expect(stat('cluster.up1.upstream_rq_504')).toBeGreaterThan(0);
  });

  it('503 upstream connect error (UF) when the endpoint refuses the connection', async () => {
    const dead = await closedPort();
    await routes([route('/', 'dead')], {
      clusters: [edsCluster('dead')],
      endpoints: [cla('dead', [['127.0.0.1', dead]])],
    });
    const r = await get('/x');
    expect(r.status).toBe(503);
    expect(r.body).toBe(
      'upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused',
    );
    expect(lastAccess()).toContain(' 503 UF ');
    expect(stat('cluster.dead.upstream_cx_connect_fail')).toBeGreaterThan(0);
  });

  it('503 upstream reset before headers (UC) when the upstream drops the connection', async () => {
    await routes([route('/', 'up1')]);
    const r = await get('/drop');
    expect(r.status).toBe(503);
    expect(r.body).toBe(
      'upstream connect error or disconnect/reset before headers. reset reason: connection termination',
    );
    expect(lastAccess()).toContain(' 503 UC ');
  });

  it('503 overflow (UO) when the circuit breaker has no room', async () => {
    await routes([route('/', 'tight')], {
      clusters: [
        edsCluster('tight', {
          circuit_breakers: { thresholds: [{ max_connections: 1, max_pending_requests: 1, max_requests: 1 }] },
        }),
      ],
      endpoints: [cla('tight', [['127.0.0.1', up1.port]])],
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const rs = await Promise.all(
      Array.from({ length: 6 }, () =>
        httpRequest(`http://127.0.0.1:${port}/delay/300`, { host: 'www.example.com', agent }),
      ),
    );
    agent.destroy();
    const codes = rs.map((r) => r.status).sort();
    expect(codes.filter((c) => c === 200).length).toBeGreaterThanOrEqual(1);
    const overflow = rs.filter((r) => r.status === 503);
    expect(overflow.length).toBeGreaterThan(0);
    expect(overflow[0]!.body).toBe('upstream connect error or disconnect/reset before headers. reset reason: overflow');
    expect(fx.proxy.access.some((l) => l.includes(' 503 UO '))).toBe(true);
    expect(stat('cluster.tight.upstream_rq_pending_overflow')).toBeGreaterThan(0);
  });
});

describe('retries', () => {
  it('retry_on 5xx retries a failed request and counts it', async () => {
    await routes([
      route('/', 'up1', {
        route: { retry_policy: { retry_on: '5xx', num_retries: 2, retry_back_off: { base_interval: '0.001s' } } },
      }),
    ]);
    const before = stat('cluster.up1.upstream_rq_retry');
    const r = await get('/flaky/a1/2');
    expect(r.status).toBe(200);
    expect(stat('cluster.up1.upstream_rq_retry') - before).toBe(2);
    expect(stat('cluster.up1.upstream_rq_retry_success')).toBeGreaterThan(0);
  });

  it('gives up after num_retries and returns the last response (URX)', async () => {
    await routes([
      route('/', 'up1', {
        route: {
          retry_policy: { retry_on: 'gateway-error', num_retries: 1, retry_back_off: { base_interval: '0.001s' } },
        },
      }),
    ]);
    const r = await get('/flaky/b1/5');
    expect(r.status).toBe(503);
    expect(lastAccess()).toContain(' 503 URX ');
  });

  it('retriable-status-codes and connect-failure onto another host', async () => {
    const dead = await closedPort();
    await routes(
      [
        route('/status/', 'up1', {
          route: {
            retry_policy: {
              retry_on: 'retriable-status-codes',
              retriable_status_codes: [409],
              num_retries: 1,
              retry_back_off: { base_interval: '0.001s' },
            },
          },
        }),
        route('/', 'halfdead', {
          route: {
            retry_policy: { retry_on: 'connect-failure', num_retries: 3, retry_back_off: { base_interval: '0.001s' } },
          },
        }),
      ],
      {
        clusters: [edsCluster('halfdead')],
        endpoints: [
          cla('halfdead', [
            ['127.0.0.1', dead],
            ['127.0.0.1', up2.port],
          ]),
        ],
      },
    );
    const before = up1.received.length;
    expect((await get('/status/409')).status).toBe(409);
    expect(up1.received.length - before).toBe(2);
    for (let i = 0; i < 4; i++) expect((await get('/x')).status).toBe(200);
  });

  it('per_try_timeout retries a slow try', async () => {
    await routes([
      route('/', 'up1', {
        route: {
          timeout: '3s',
          retry_policy: {
            retry_on: '5xx',
            num_retries: 1,
            per_try_timeout: '0.1s',
            retry_back_off: { base_interval: '0.001s' },
          },
        },
      }),
    ]);
    const r = await get('/delay/1000');
    expect(r.status).toBe(504);
    expect(stat('cluster.up1.upstream_rq_per_try_timeout')).toBeGreaterThanOrEqual(2);
    // The expected timeout header carries the per-try timeout.
    const ok = await get('/echo');
    expect(JSON.parse(ok.body).headers['x-envoy-expected-rq-timeout-ms']).toBe('100');
  });
});

describe('load balancing and health', () => {
  it('ROUND_ROBIN alternates, RANDOM and LEAST_REQUEST use every host', async () => {
    for (const lb of ['ROUND_ROBIN', 'RANDOM', 'LEAST_REQUEST']) {
      await routes([route('/', 'lb')], {
        clusters: [edsCluster('lb', { lb_policy: lb })],
        endpoints: [
          cla('lb', [
            ['127.0.0.1', up1.port],
            ['127.0.0.1', up2.port],
          ]),
        ],
      });
      const names: string[] = [];
      for (let i = 0; i < 40; i++) names.push(JSON.parse((await get('/lb')).body).name);
      expect(new Set(names)).toEqual(new Set(['up1', 'up2']));
      if (lb === 'ROUND_ROBIN') {
        for (let i = 1; i < names.length; i++) expect(names[i]).not.toBe(names[i - 1]);
      }
    }
  });

  it('endpoint health from EDS: unhealthy hosts get no traffic; all unhealthy is panic mode', async () => {
    await routes([route('/', 'lb')], {
      clusters: [edsCluster('lb')],
      endpoints: [
        cla('lb', [
          { address: '127.0.0.1', port: up1.port, health: 'UNHEALTHY' },
          { address: '127.0.0.1', port: up2.port, health: 'HEALTHY' },
          { address: '127.0.0.1', port: up2.port + 0, health: 'HEALTHY' },
        ]),
      ],
    });
    for (let i = 0; i < 10; i++) expect(JSON.parse((await get('/h')).body).name).toBe('up2');
    await routes([route('/', 'lb')], {
      clusters: [edsCluster('lb')],
      endpoints: [cla('lb', [{ address: '127.0.0.1', port: up1.port, health: 'UNHEALTHY' }])],
    });
    const before = stat('cluster.lb.lb_healthy_panic');
    expect((await get('/h')).status).toBe(200);
    expect(stat('cluster.lb.lb_healthy_panic')).toBe(before + 1);
  });

  it('weighted round robin follows load_balancing_weight', async () => {
    await routes([route('/', 'lb')], {
      clusters: [edsCluster('lb')],
      endpoints: [
        cla('lb', [
          { address: '127.0.0.1', port: up1.port, weight: 3 },
          { address: '127.0.0.1', port: up2.port, weight: 1 },
        ]),
      ],
    });
    const names: string[] = [];
    for (let i = 0; i < 40; i++) names.push(JSON.parse((await get('/w')).body).name);
    expect(names.filter((n) => n === 'up1').length).toBe(30);
  });
});

describe('connection pools', () => {
  it('reuses one keep-alive connection for sequential requests: "creating a new connection" once', async () => {
    await routes([route('/', 'pooled')], {
      clusters: [edsCluster('pooled')],
      endpoints: [cla('pooled', [['127.0.0.1', up1.port]])],
    });
    fx.proxy.server.logs.setLevel('pool', 'debug');
    fx.proxy.server.logs.setLevel('client', 'debug');
    const from = fx.proxy.logs.length;
    for (let i = 0; i < 10; i++) expect((await get('/p')).status).toBe(200);
    const lines = fx.proxy.logs.slice(from);
    expect(lines.filter((l) => l.includes('creating a new connection')).length).toBe(1);
    expect(lines.filter((l) => l.includes('][client] ') && l.endsWith('] connecting')).length).toBe(1);
    expect(lines.filter((l) => l.endsWith('] connected')).length).toBe(1);
    expect(
      lines.filter((l) => l.includes('queueing stream due to no available connections (ready=0 busy=0 connecting=0)'))
        .length,
    ).toBe(1);
    expect(lines.filter((l) => l.includes('using existing fully connected connection')).length).toBe(9);
    expect(stat('cluster.pooled.upstream_cx_total')).toBe(1);
    fx.proxy.server.logs.setAll('info');
  });

  it('max_connections caps the pool; requests wait for a free connection', async () => {
    await routes([route('/', 'one')], {
      clusters: [edsCluster('one', { circuit_breakers: { thresholds: [{ max_connections: 1 }] } })],
      endpoints: [cla('one', [['127.0.0.1', up2.port]])],
    });
    const before = up2.connections;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const rs = await Promise.all(
      Array.from({ length: 5 }, () =>
        httpRequest(`http://127.0.0.1:${port}/delay/50`, { host: 'www.example.com', agent }),
      ),
    );
    agent.destroy();
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(up2.connections - before).toBe(1);
    expect(stat('cluster.one.upstream_cx_overflow')).toBeGreaterThan(0);
  });
});

describe('stats', () => {
  it('counters equal the requests actually sent', async () => {
    await routes([route('/', 'counted')], {
      clusters: [edsCluster('counted')],
      endpoints: [cla('counted', [['127.0.0.1', up1.port]])],
    });
    const d0 = stat('http.http.downstream_rq_total');
    const d2 = stat('http.http.downstream_rq_2xx');
    const l2 = stat(`listener.127.0.0.1_${port}.http.http.downstream_rq_2xx`);
    const n = 17;
    for (let i = 0; i < n; i++) expect((await get(`/c${i}`)).status).toBe(200);
    expect(stat('http.http.downstream_rq_total') - d0).toBe(n);
    expect(stat('http.http.downstream_rq_2xx') - d2).toBe(n);
    expect(stat(`listener.127.0.0.1_${port}.http.http.downstream_rq_2xx`) - l2).toBe(n);
    expect(stat('cluster.counted.upstream_rq_total')).toBe(n);
    expect(stat('cluster.counted.upstream_rq_200')).toBe(n);
    expect(stat('cluster.counted.upstream_rq_2xx')).toBe(n);
    expect(stat('cluster.counted.upstream_rq_completed')).toBe(n);
    const prom = await fx.proxy.admin('/stats/prometheus');
    expect(prom.body).toContain(`envoy_cluster_upstream_rq_total{envoy_cluster_name="counted"} ${n}`);
    expect(prom.body).toContain(
      `envoy_cluster_upstream_rq_xx{envoy_response_code_class="2",envoy_cluster_name="counted"} ${n}`,
    );
  });
});
