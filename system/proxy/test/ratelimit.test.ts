// envoy.filters.http.ratelimit end to end through the proxy against the rate-limit sample (system/ratelimit):
// RouteAction.rate_limits make the descriptors, ShouldRateLimit decides, as Envoy's ratelimit filter
// (source/extensions/filters/http/ratelimit/ratelimit.cc) and router_ratelimit.cc do: 429 with
// x-envoy-ratelimited and flag RL once over the limit, no call when an action cannot make its entry, failure mode
// allow by default and 500 RLSE with failure_mode_deny, stats cluster.<route cluster>.ratelimit.*.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRule, type RateLimitService, startRateLimit } from '../../ratelimit/main.ts';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import {
  cla,
  edsCluster,
  H2_CLUSTER,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';
import { closedPort } from '../testing/upstream.ts';

type J = Record<string, any>;

const APP = 'kube_sampleapp_sampleapp_8000';
const L = 'listener~8080';
const h2 = H2_CLUSTER;

let app: SampleApp;
let rls: RateLimitService;
let fx: XdsFixture;
let deadPort: number;

const rateLimit = (cluster: string, extra: J = {}) => ({
  name: 'envoy.filters.http.ratelimit',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit',
    domain: 'gwlab',
    timeout: '5s',
    rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: cluster } }, transport_api_version: 'V3' },
    ...extra,
  },
});
const limited = (prefix: string, actions: J[][]) =>
  route(prefix, APP, { route: { rate_limits: actions.map((a) => ({ actions: a })) } });

async function push(filters: J[], routes: J[]) {
  const res = await fx.apply({
    clusters: [edsCluster(APP), edsCluster('rls', h2), edsCluster('dead-rls', h2)],
    endpoints: [
      cla(APP, [['127.0.0.1', app.port]]),
      cla('rls', [['127.0.0.1', rls.grpcPort]]),
      cla('dead-rls', [['127.0.0.1', deadPort]]),
    ],
    listeners: [listener(L, 0, { rds: L, filters })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], routes)])],
  });
  return res.nacks.map((n) => n.error_detail?.message);
}

const get = (path: string, headers: Record<string, string> = {}) =>
  httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}${path}`, { host: 'www.example.com', headers });
const stat = (n: string) => fx.proxy.server.stats.value(n) ?? 0;
const counters = async () => (await (await fetch(`${rls.url}/counters`)).json()) as J[];

beforeAll(async () => {
  [app, deadPort] = await Promise.all([startSampleApp(), closedPort()]);
  rls = await startRateLimit({
    rules: ['gwlab:generic_key:3/hour', 'gwlab:user:2/hour'].map(parseRule),
    log: false,
  });
  fx = await startXdsFixture();
  expect(await push([], [route('/', APP)])).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([app?.close(), rls?.close()]);
});

describe('global rate limit (ShouldRateLimit)', () => {
  it('429 with x-envoy-ratelimited (flag RL) once the descriptor is over its limit; the service counts it', async () => {
    expect(
      await push(
        [rateLimit('rls')],
        [limited('/get', [[{ generic_key: { descriptor_value: 'g1' } }]]), route('/', APP)],
      ),
    ).toEqual([]);
    for (let i = 0; i < 3; i++) expect((await get('/get')).status).toBe(200);
    const r = await get('/get');
    expect(r.status).toBe(429);
    expect(r.headers['x-envoy-ratelimited']).toBe('true');
    expect(r.body).toBe('');
    expect(fx.proxy.access.at(-1)).toContain(' 429 RL ');
    expect(stat(`cluster.${APP}.ratelimit.ok`)).toBe(3);
    expect(stat(`cluster.${APP}.ratelimit.over_limit`)).toBe(1);
    expect(stat('cluster.rls.upstream_rq_total')).toBe(4);
    expect(await counters()).toContainEqual(
      expect.objectContaining({ domain: 'gwlab', descriptor: 'generic_key=g1', hits: 4, limit: 3, overLimit: 1 }),
    );
    // A route without rate_limits is not limited.
    expect((await get('/headers')).status).toBe(200);
  });

  it('a request_headers action whose header is absent makes no descriptor (no call); present, it counts per value', async () => {
    expect(
      await push(
        [rateLimit('rls')],
        [limited('/', [[{ request_headers: { header_name: 'x-user', descriptor_key: 'user' } }]])],
      ),
    ).toEqual([]);
    const calls = stat('cluster.rls.upstream_rq_total');
    for (let i = 0; i < 4; i++) expect((await get('/get')).status).toBe(200);
    expect(stat('cluster.rls.upstream_rq_total')).toBe(calls);
    expect((await get('/get', { 'x-user': 'ann' })).status).toBe(200);
    expect((await get('/get', { 'x-user': 'ann' })).status).toBe(200);
    expect((await get('/get', { 'x-user': 'ann' })).status).toBe(429);
    expect((await get('/get', { 'x-user': 'bob' })).status).toBe(200);
    expect(await counters()).toContainEqual(expect.objectContaining({ descriptor: 'user=ann', hits: 3 }));
  });

  it('the service is down: requests pass (failure_mode_allowed); with failure_mode_deny, 500 RLSE', async () => {
    const actions = [[{ generic_key: { descriptor_value: 'down' } }]];
    expect(await push([rateLimit('dead-rls')], [limited('/', actions)])).toEqual([]);
    expect((await get('/get')).status).toBe(200);
    expect(stat(`cluster.${APP}.ratelimit.error`)).toBeGreaterThanOrEqual(1);
    expect(stat(`cluster.${APP}.ratelimit.failure_mode_allowed`)).toBeGreaterThanOrEqual(1);
    expect(await push([rateLimit('dead-rls', { failure_mode_deny: true })], [limited('/', actions)])).toEqual([]);
    const r = await get('/get');
    expect(r.status).toBe(500);
    expect(fx.proxy.access.at(-1)).toContain(' 500 RLSE ');
  });

  it('NACKs a rate limit action it does not implement, naming it', async () => {
    const nacks = await push(
      [rateLimit('rls')],
      [
        limited('/', [
          [{ header_value_match: { descriptor_value: 'x', headers: [{ name: 'a', present_match: true }] } }],
        ]),
      ],
    );
    expect(nacks.join(' ')).toContain('header_value_match: this rate limit action is not supported');
  });
});
