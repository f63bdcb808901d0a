// Active health checks, outlier detection and consistent-hash load balancing end to end: one proxy fed by the test
// xDS server, two scriptable upstreams. What is checked is what Envoy shows (docs arch_overview/upstream/
// health_checking, outlier, load_balancing; /clusters health flags as source/server/admin/clusters_handler.cc prints
// them; stats cluster.<name>.health_check.* and outlier_detection.*).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { compileHealthChecks } from '../upstream/cluster-health-config.ts';

type J = Record<string, any>;

let up1: TestUpstream;
let up2: TestUpstream;
let fx: XdsFixture;
let port: number;
const LISTENER = 'listener~8080';

async function push(cluster: J, hosts: Array<[string, number]>, routeExtra: J = {}) {
  const res = await fx.apply({
    clusters: [cluster],
    endpoints: [cla(cluster.name, hosts)],
    listeners: [listener(LISTENER, 0, { rds: LISTENER })],
    routes: [routeConfig(LISTENER, [vhost('www', ['www.example.com'], [route('/', cluster.name, routeExtra)])])],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  port = fx.proxy.port(LISTENER);
}

const get = (path: string, headers: Record<string, string> = {}) =>
  httpRequest(`http://127.0.0.1:${port}${path}`, { host: 'www.example.com', headers });
const stat = (name: string) => fx.proxy.server.stats.value(name) ?? 0;
const clusterLines = async (name: string) =>
  (await fx.proxy.admin('/clusters')).body.split('\n').filter((l) => l.startsWith(`${name}::`));
const flagsOf = async (name: string, p: number) =>
  (await clusterLines(name)).find((l) => l.startsWith(`${name}::127.0.0.1:${p}::health_flags::`))?.split('::')[3];

/** Retries an assertion until it holds (10 s). */
const until = (f: () => Promise<void>) =>
  eventually(async () => {
    await f();
    return true;
  });

function hc(path: string, extra: J = {}): J {
  return {
    timeout: '1s',
    interval: '0.2s',
    no_traffic_interval: '0.2s',
    unhealthy_threshold: 1,
    healthy_threshold: 1,
    http_health_check: { path },
    ...extra,
  };
}

beforeAll(async () => {
  [up1, up2] = await Promise.all([startTestUpstream('up1'), startTestUpstream('up2')]);
  fx = await startXdsFixture();
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([up1?.close(), up2?.close()]);
});

describe('active HTTP health checks', () => {
  it('a health check path that 404s marks every host /failed_active_hc; none healthy and no panic: 503 UH', async () => {
    const c = edsCluster('hc404', {
      health_checks: [hc('/status/404')],
      common_lb_config: { healthy_panic_threshold: { value: 0 } },
    });
    await push(c, [
      ['127.0.0.1', up1.port],
      ['127.0.0.1', up2.port],
    ]);
    await until(async () => expect(await flagsOf('hc404', up1.port)).toBe('/failed_active_hc'));
    await until(async () => expect(await flagsOf('hc404', up2.port)).toBe('/failed_active_hc'));
    const r = await get('/get');
    expect(r.status).toBe(503);
    expect(r.body).toBe('no healthy upstream');
    // /clusters?format=json: Envoy's HostHealthStatus fields.
    const json = JSON.parse((await fx.proxy.admin('/clusters?format=json')).body);
    const hosts = json.cluster_statuses.find((c: J) => c.name === 'hc404').host_statuses;
    expect(hosts.map((h: J) => h.health_status.failed_active_health_check)).toEqual([true, true]);
    expect(hosts[0].health_status.eds_health_status).toBe('UNKNOWN');
    expect(stat('cluster.hc404.health_check.failure')).toBeGreaterThanOrEqual(2);
    expect(stat('cluster.hc404.health_check.network_failure')).toBe(0);
    expect(stat('cluster.hc404.health_check.healthy')).toBe(0);
    expect(stat('cluster.hc404.upstream_cx_none_healthy')).toBeGreaterThanOrEqual(1);
    // The health check request: GET <path>, Host the cluster's name, user-agent Envoy/HC.
    const seen = up1.received.find((x) => x.url === '/status/404');
    expect(seen?.headers.host).toBe('hc404');
    expect(seen?.headers['user-agent']).toBe('Envoy/HC');

    // Fixed by the path: the new cluster's hosts pass their first check and take traffic.
    await push({ ...c, health_checks: [hc('/status/200')] }, [
      ['127.0.0.1', up1.port],
      ['127.0.0.1', up2.port],
    ]);
    await until(async () => expect(await flagsOf('hc404', up1.port)).toBe('healthy'));
    expect((await get('/get')).status).toBe(200);
    expect(stat('cluster.hc404.health_check.success')).toBeGreaterThanOrEqual(2);
    expect(stat('cluster.hc404.health_check.healthy')).toBe(2);
  });

  it('a host that refuses connections fails its checks; the load balancer skips it', async () => {
    const dead = await closedPort();
    await push(edsCluster('hcdead', { health_checks: [hc('/status/200', { timeout: '0.5s' })] }), [
      ['127.0.0.1', up1.port],
      ['127.0.0.1', dead],
    ]);
    await until(async () => expect(await flagsOf('hcdead', dead)).toBe('/failed_active_hc'));
    await until(async () => expect(await flagsOf('hcdead', up1.port)).toBe('healthy'));
    for (let i = 0; i < 6; i++) {
      const r = await get('/get');
      expect(r.status).toBe(200);
      expect(r.headers['x-upstream']).toBe('up1');
    }
    expect(stat('cluster.hcdead.health_check.network_failure')).toBeGreaterThanOrEqual(1);
    expect(stat('cluster.hcdead.health_check.attempts')).toBeGreaterThanOrEqual(2);
  });

  it('expected_statuses ranges are honoured; a host that starts failing is marked after the answer', async () => {
    up2.forceStatus = undefined;
    await push(
      edsCluster('hcrange', {
        health_checks: [
          hc('/status/204', {
            http_health_check: { path: '/status/204', expected_statuses: [{ start: 200, end: 300 }] },
          }),
        ],
      }),
      [
        ['127.0.0.1', up1.port],
        ['127.0.0.1', up2.port],
      ],
    );
    await until(async () => expect(await flagsOf('hcrange', up2.port)).toBe('healthy'));
    up2.forceStatus = 500;
    try {
      await until(async () => expect(await flagsOf('hcrange', up2.port)).toBe('/failed_active_hc'));
    } finally {
      up2.forceStatus = undefined;
    }
    await until(async () => expect(await flagsOf('hcrange', up2.port)).toBe('healthy'));
  });

  it('NACKs what it does not implement, in Envoy words where Envoy has them', async () => {
    const res = await fx.apply({
      clusters: [edsCluster('bad', { health_checks: [hc('/a'), hc('/b')] })],
      endpoints: [cla('bad', [['127.0.0.1', up1.port]])],
    });
    expect(res.nacks.map((n) => n.error_detail?.message).join()).toContain('Multiple health checks not supported');
    // Only HTTP health checks are implemented.
    expect(() =>
      compileHealthChecks(
        [{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} }],
        'bad',
      ),
    ).toThrow('cluster bad: health_checks[0].tcp_health_check: only http_health_check is supported');
  });
});

describe('outlier detection', () => {
  it('consecutive 5xx eject the host (/failed_outlier_check); traffic goes to the healthy one', async () => {
    await push(
      edsCluster('od', {
        outlier_detection: { consecutive_5xx: 3, interval: '60s', base_ejection_time: '60s', max_ejection_percent: 50 },
      }),
      [
        ['127.0.0.1', up1.port],
        ['127.0.0.1', up2.port],
      ],
    );
    up2.forceStatus = 500;
    try {
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) codes.push((await get('/get')).status);
      expect(codes.filter((c) => c === 500)).toHaveLength(3);
      await until(async () => expect(await flagsOf('od', up2.port)).toBe('/failed_outlier_check'));
      await until(async () => expect(await flagsOf('od', up1.port)).toBe('healthy'));
      for (let i = 0; i < 6; i++) expect((await get('/get')).headers['x-upstream']).toBe('up1');
      expect(stat('cluster.od.outlier_detection.ejections_active')).toBe(1);
      expect(stat('cluster.od.outlier_detection.ejections_enforced_total')).toBe(1);
      expect(stat('cluster.od.outlier_detection.ejections_enforced_consecutive_5xx')).toBe(1);
      expect(stat('cluster.od.outlier_detection.ejections_detected_consecutive_5xx')).toBe(1);
      expect(await clusterLines('od')).toContain('od::outlier::success_rate_average::-1');
    } finally {
      up2.forceStatus = undefined;
    }
  });

  it('max_ejection_percent caps ejections (overflow); all ejected with no panic: 503 UH', async () => {
    const c = edsCluster('od2', {
      outlier_detection: { consecutive_5xx: 2, interval: '60s', base_ejection_time: '60s', max_ejection_percent: 100 },
      common_lb_config: { healthy_panic_threshold: { value: 0 } },
    });
    await push(c, [
      ['127.0.0.1', up1.port],
      ['127.0.0.1', up2.port],
    ]);
    up1.forceStatus = 503;
    up2.forceStatus = 503;
    try {
      for (let i = 0; i < 4; i++) expect((await get('/get')).status).toBe(503);
      await until(async () => expect(await flagsOf('od2', up1.port)).toBe('/failed_outlier_check'));
      await until(async () => expect(await flagsOf('od2', up2.port)).toBe('/failed_outlier_check'));
      const r = await get('/get');
      expect(r.body).toBe('no healthy upstream');
      expect(fx.proxy.server.stats.value('cluster.od2.outlier_detection.ejections_active')).toBe(2);
    } finally {
      up1.forceStatus = undefined;
      up2.forceStatus = undefined;
    }
    // The default 10% with two hosts: the first ejection already overflows.
    await push(edsCluster('od3', { outlier_detection: { consecutive_5xx: 2 } }), [
      ['127.0.0.1', up1.port],
      ['127.0.0.1', up2.port],
    ]);
    up2.forceStatus = 500;
    try {
      for (let i = 0; i < 6; i++) await get('/get');
      await until(async () => expect(await flagsOf('od3', up2.port)).toBe('healthy'));
      expect(stat('cluster.od3.outlier_detection.ejections_overflow')).toBeGreaterThanOrEqual(1);
    } finally {
      up2.forceStatus = undefined;
    }
  });

  it('an ejected host comes back after base_ejection_time, at the next interval', async () => {
    await push(
      edsCluster('od4', {
        outlier_detection: {
          consecutive_5xx: 1,
          interval: '0.2s',
          base_ejection_time: '0.3s',
          max_ejection_percent: 50,
        },
      }),
      [
        ['127.0.0.1', up1.port],
        ['127.0.0.1', up2.port],
      ],
    );
    up2.forceStatus = 500;
    try {
      for (let i = 0; i < 2; i++) await get('/get');
      await until(async () => expect(await flagsOf('od4', up2.port)).toBe('/failed_outlier_check'));
    } finally {
      up2.forceStatus = undefined;
    }
    await until(async () => expect(await flagsOf('od4', up2.port)).toBe('healthy'));
    expect(stat('cluster.od4.outlier_detection.ejections_active')).toBe(0);
  });
});

describe('consistent hashing (RING_HASH, MAGLEV) with the route hash_policy', () => {
  for (const lb of ['RING_HASH', 'MAGLEV']) {
    it(`${lb}: one header value always lands on one host; many values reach both`, async () => {
      await push(
        edsCluster(`h-${lb}`, { lb_policy: lb }),
        [
          ['127.0.0.1', up1.port],
          ['127.0.0.1', up2.port],
        ],
        { route: { hash_policy: [{ header: { header_name: 'x-user' } }] } },
      );
      const first = (await get('/get', { 'x-user': 'alice' })).headers['x-upstream'];
      for (let i = 0; i < 8; i++) expect((await get('/get', { 'x-user': 'alice' })).headers['x-upstream']).toBe(first);
      const seen = new Set<string>();
      for (let i = 0; i < 40; i++)
        seen.add(String((await get('/get', { 'x-user': `user-${i}` })).headers['x-upstream']));
      expect([...seen].sort()).toEqual(['up1', 'up2']);
    });
  }

  it('source_ip hashing is sticky per client address', async () => {
    await push(
      edsCluster('h-ip', { lb_policy: 'RING_HASH' }),
      [
        ['127.0.0.1', up1.port],
        ['127.0.0.1', up2.port],
      ],
      { route: { hash_policy: [{ connection_properties: { source_ip: true } }] } },
    );
    const first = (await get('/get')).headers['x-upstream'];
    for (let i = 0; i < 6; i++) expect((await get('/get')).headers['x-upstream']).toBe(first);
  });
});
