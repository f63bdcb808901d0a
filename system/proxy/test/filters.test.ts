// HTTP filters end to end, each configured on the HCM and per route (typed_per_filter_config): cors,
// local_ratelimit, fault, ext_authz (against the ext-auth sample) and health_check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExtAuth, startExtAuth } from '../../extauth/main.ts';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import {
  cla,
  edsCluster,
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
let app: SampleApp;
let authz: ExtAuth;
let fx: XdsFixture;
let deadPort: number;

const T = 'type.googleapis.com/envoy.extensions.filters.http.';
const CORS = { name: 'envoy.filters.http.cors', typed_config: { '@type': `${T}cors.v3.Cors` } };
const corsPolicy = (p: J) => ({ '@type': `${T}cors.v3.CorsPolicy`, ...p });
const rateLimit = (max: number, extra: J = {}) => ({
  '@type': `${T}local_ratelimit.v3.LocalRateLimit`,
  stat_prefix: 'http_local_rate_limiter',
  token_bucket: { max_tokens: max, tokens_per_fill: max, fill_interval: '60s' },
  filter_enabled: { runtime_key: 'rl_enabled', default_value: { numerator: 100, denominator: 'HUNDRED' } },
  filter_enforced: { runtime_key: 'rl_enforced', default_value: { numerator: 100, denominator: 'HUNDRED' } },
  ...extra,
});
const RL = {
  name: 'envoy.filters.http.local_ratelimit',
  typed_config: { '@type': `${T}local_ratelimit.v3.LocalRateLimit`, stat_prefix: 'http_local_rate_limiter' },
};
const fault = (f: J) => ({ '@type': `${T}fault.v3.HTTPFault`, ...f });
const FAULT = { name: 'envoy.filters.http.fault', typed_config: fault({}) };
const extAuthz = (cluster: string, extra: J = {}) => ({
  name: 'envoy.filters.http.ext_authz',
  typed_config: {
    '@type': `${T}ext_authz.v3.ExtAuthz`,
    http_service: {
      server_uri: { uri: 'http://extauth.gwvendor-system:9000', cluster, timeout: '1s' },
      authorization_request: { allowed_headers: { patterns: [{ exact: 'x-ext-authz' }] } },
      authorization_response: { allowed_upstream_headers: { patterns: [{ exact: 'x-ext-authz-check-result' }] } },
    },
    ...extra,
  },
});
const HEALTH = {
  name: 'envoy.filters.http.health_check',
  typed_config: {
    '@type': `${T}health_check.v3.HealthCheck`,
    pass_through_mode: false,
    headers: [{ name: ':path', string_match: { exact: '/healthz' } }],
  },
};

async function push(filters: J[], routes: J[], vhostExtra: J = {}) {
  const res = await fx.apply({
    clusters: [edsCluster(APP), edsCluster('extauth'), edsCluster('deadauth')],
    endpoints: [
      cla(APP, [['127.0.0.1', app.port]]),
      cla('extauth', [['127.0.0.1', authz.port]]),
      cla('deadauth', [['127.0.0.1', deadPort]]),
    ],
    listeners: [listener(L, 0, { rds: L, filters })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], routes, vhostExtra)])],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
}

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}${path}`, { host: 'www.example.com', headers, method });
const lastAccess = () => fx.proxy.access.at(-1) ?? '';
const stat = (n: string) => fx.proxy.server.stats.value(n) ?? 0;

beforeAll(async () => {
  [app, authz, deadPort] = await Promise.all([startSampleApp(), startExtAuth({ log: false }), closedPort()]);
  fx = await startXdsFixture();
  await push([], [route('/', APP)]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([app?.close(), authz?.close()]);
});

describe('cors', () => {
  it('answers preflights from allowed origins and decorates their responses; ignores other origins', async () => {
    await push(
      [CORS],
      [
        route('/', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.cors': corsPolicy({
              allow_origin_string_match: [{ exact: 'https://app.example.com' }, { suffix: '.trusted.dev' }],
              allow_methods: 'GET, POST',
              allow_headers: 'x-custom',
              expose_headers: 'x-exposed',
              max_age: '600',
              allow_credentials: true,
            }),
          },
        }),
      ],
    );
    const pre = await get(
      '/get',
      { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      'OPTIONS',
    );
    expect(pre.status).toBe(200);
    expect(pre.headers).toMatchObject({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'x-custom',
      'access-control-max-age': '600',
      'access-control-allow-credentials': 'true',
      server: 'envoy',
    });
    const simple = await get('/response-headers?x=1', { origin: 'https://a.trusted.dev' });
    expect(simple.headers['access-control-allow-origin']).toBe('https://a.trusted.dev');
    expect(simple.headers['access-control-expose-headers']).toBe('x-exposed');
    // Not allowed: the sample app's own CORS answer passes through untouched.
    const other = await get('/get', { origin: 'https://evil.example' });
    expect(other.headers['access-control-allow-origin']).toBe('https://evil.example');
    expect(other.headers['access-control-expose-headers']).toBeUndefined();
    expect(stat('http.http.cors.origin_valid')).toBeGreaterThanOrEqual(2);
    expect(stat('http.http.cors.origin_invalid')).toBeGreaterThanOrEqual(1);
  });

  it('answers a preflight to `*` methods and headers with those it asked for (credentialed or not)', async () => {
    await push(
      [CORS],
      [
        route('/', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.cors': corsPolicy({
              allow_origin_string_match: [{ safe_regex: { regex: '.*' } }],
              allow_methods: '*',
              allow_headers: '*',
              allow_credentials: true,
            }),
          },
        }),
      ],
    );
    const pre = await get(
      '/get',
      {
        origin: 'https://other.foo.com',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-header-1, x-header-2',
      },
      'OPTIONS',
    );
    expect(pre.headers).toMatchObject({
      'access-control-allow-origin': 'https://other.foo.com',
      'access-control-allow-methods': 'PUT',
      'access-control-allow-headers': 'x-header-1, x-header-2',
      'access-control-allow-credentials': 'true',
    });
    // Nothing asked: Envoy echoes the empty value.
    const bare = await get('/get', { origin: 'https://o.example', 'access-control-request-method': 'GET' }, 'OPTIONS');
    expect(bare.headers['access-control-allow-headers']).toBe('');
    expect(bare.headers['access-control-allow-methods']).toBe('GET');
  });

  it('answers a preflight from a refused origin itself when forward_not_matching_preflights is false', async () => {
    await push(
      [CORS],
      [
        route('/', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.cors': corsPolicy({
              allow_origin_string_match: [{ exact: 'https://www.foo.com' }],
              allow_methods: 'GET',
              expose_headers: 'x-header-3',
              forward_not_matching_preflights: false,
            }),
          },
        }),
      ],
    );
    const ask = { 'access-control-request-method': 'GET' };
    const refused = await get('/get', { origin: 'https://foobar.com', ...ask }, 'OPTIONS');
    expect(refused.status).toBe(200);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    expect(refused.body).toBe('');
    const allowed = await get('/get', { origin: 'https://www.foo.com', ...ask }, 'OPTIONS');
    expect(allowed.headers).toMatchObject({
      'access-control-allow-origin': 'https://www.foo.com',
      'access-control-expose-headers': 'x-header-3',
    });
  });

  it('takes the legacy virtual host cors policy too', async () => {
    await push([CORS], [route('/', APP)], {
      cors: { allow_origin_string_match: [{ exact: '*' }], allow_methods: 'PUT' },
    });
    const pre = await get('/get', { origin: 'https://x.y', 'access-control-request-method': 'PUT' }, 'OPTIONS');
    expect(pre.headers['access-control-allow-methods']).toBe('PUT');
    expect(pre.headers['access-control-allow-origin']).toBe('https://x.y');
  });
});

describe('local_ratelimit', () => {
  it('429 local_rate_limited (RL) once the per-route token bucket is empty; other routes unaffected', async () => {
    await push(
      [RL],
      [
        route('/limited', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.local_ratelimit': rateLimit(2, {
              response_headers_to_add: [{ header: { key: 'x-rate-limited', value: 'yes' } }],
            }),
          },
        }),
        route('/', APP),
      ],
    );
    expect((await get('/limited/a')).status).toBe(404); // the sample app has no /limited: but it got through
    expect((await get('/limited/b')).status).toBe(404);
    const r = await get('/limited/c');
    expect(r.status).toBe(429);
    expect(r.body).toBe('local_rate_limited');
    expect(r.headers['x-rate-limited']).toBe('yes');
    expect(lastAccess()).toContain(' 429 RL ');
    expect((await get('/get')).status).toBe(200);
    expect(stat('http_local_rate_limiter.http_local_rate_limit.rate_limited')).toBe(1);
    expect(stat('http_local_rate_limiter.http_local_rate_limit.ok')).toBe(2);
    expect(stat('http_local_rate_limiter.http_local_rate_limit.enforced')).toBe(1);
    const prom = (await fx.proxy.admin('/stats/prometheus')).body;
    expect(prom).toContain(
      'envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="http_local_rate_limiter"} 1',
    );
  });

  it('enabled but not enforced only counts; a custom status; HCM-level bucket', async () => {
    const shadow = rateLimit(1, {
      filter_enforced: { runtime_key: 'x', default_value: { numerator: 0 } },
      stat_prefix: 'shadow',
    });
    await push(
      [
        {
          name: 'envoy.filters.http.local_ratelimit',
          typed_config: rateLimit(1, { stat_prefix: 'hcm', status: { code: 'ServiceUnavailable' } }),
        },
      ],
      [
        route('/shadow', APP, { typed_per_filter_config: { 'envoy.filters.http.local_ratelimit': shadow } }),
        route('/', APP),
      ],
    );
    for (let i = 0; i < 3; i++) expect((await get('/shadow')).status).toBe(404);
    expect(stat('shadow.http_local_rate_limit.rate_limited')).toBe(2);
    expect(stat('shadow.http_local_rate_limit.enforced')).toBe(0);
    expect((await get('/get')).status).toBe(200);
    const limited = await get('/get');
    expect(limited.status).toBe(503);
    expect(limited.body).toBe('local_rate_limited');
  });
});

describe('fault', () => {
  it('aborts (FI) and delays (DI), per route; header matchers select requests', async () => {
    await push(
      [FAULT],
      [
        route('/abort', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.fault': fault({ abort: { http_status: 418, percentage: { numerator: 100 } } }),
          },
        }),
        route('/delay', APP, {
          route: { prefix_rewrite: '/get' },
          typed_per_filter_config: {
            'envoy.filters.http.fault': fault({ delay: { fixed_delay: '0.2s', percentage: { numerator: 100 } } }),
          },
        }),
        route('/only-if', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.fault': fault({
              abort: { http_status: 500, percentage: { numerator: 100 } },
              headers: [{ name: 'x-fault', present_match: true }],
            }),
          },
        }),
        route('/', APP),
      ],
    );
    const a = await get('/abort');
    expect(a.status).toBe(418);
    expect(a.body).toBe('fault filter abort');
    expect(lastAccess()).toContain(' 418 FI ');
    const t0 = performance.now();
    const d = await get('/delay');
    expect(d.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    expect(lastAccess()).toContain(' 200 DI ');
    expect((await get('/only-if')).status).toBe(404);
    expect((await get('/only-if', { 'x-fault': '1' })).status).toBe(500);
    expect(stat('http.http.fault.aborts_injected')).toBe(2);
    expect(stat('http.http.fault.delays_injected')).toBe(1);
    // The HCM-level config (no faults) applies elsewhere.
    expect((await get('/get')).status).toBe(200);
  });

  it('FilterConfig.disabled turns a filter off on a route', async () => {
    await push(
      [
        {
          name: 'envoy.filters.http.fault',
          typed_config: fault({ abort: { http_status: 503, percentage: { numerator: 100 } } }),
        },
      ],
      [
        route('/free', APP, {
          route: { prefix_rewrite: '/get' },
          typed_per_filter_config: {
            'envoy.filters.http.fault': {
              '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig',
              disabled: true,
            },
          },
        }),
        route('/', APP),
      ],
    );
    expect((await get('/free')).status).toBe(200);
    expect((await get('/get')).status).toBe(503);
  });

  it('a filter disabled in the HCM chain is kept and runs only on routes whose typed_per_filter_config enables it', async () => {
    await push(
      [
        {
          name: 'envoy.filters.http.fault',
          disabled: true,
          typed_config: fault({ abort: { http_status: 503, percentage: { numerator: 100 } } }),
        },
      ],
      [
        route('/on', APP, {
          route: { prefix_rewrite: '/get' },
          typed_per_filter_config: {
            'envoy.filters.http.fault': {
              '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig',
              disabled: false,
            },
          },
        }),
        route('/', APP),
      ],
    );
    expect((await get('/get')).status).toBe(200);
    expect((await get('/on')).status).toBe(503);
  });
});

describe('ext_authz with the ext-auth sample', () => {
  it('allows with x-ext-authz: allow, denies (403, UAEX) otherwise, relaying the decision', async () => {
    await push([extAuthz('extauth')], [route('/', APP)]);
    const ok = await get('/headers', { 'x-ext-authz': 'allow' });
    expect(ok.status).toBe(200);
    const seen = JSON.parse(ok.body).headers as Record<string, string[]>;
    expect(seen['X-Ext-Authz-Check-Result']).toEqual(['allowed']);
    const denied = await get('/headers', { 'x-ext-authz': 'deny' });
    expect(denied.status).toBe(403);
    expect(denied.headers['x-ext-authz-check-result']).toBe('denied');
    expect(denied.body).toMatch(/^denied by ext_authz: /);
    expect(lastAccess()).toContain(' 403 UAEX ');
    const missing = await get('/headers');
    expect(missing.status).toBe(403);
    expect(stat('http.http.ext_authz.ok')).toBe(1);
    expect(stat('http.http.ext_authz.denied')).toBe(2);
  });

  it('is disabled per route with ExtAuthzPerRoute', async () => {
    await push(
      [extAuthz('extauth')],
      [
        route('/public', APP, {
          route: { prefix_rewrite: '/get' },
          typed_per_filter_config: {
            'envoy.filters.http.ext_authz': { '@type': `${T}ext_authz.v3.ExtAuthzPerRoute`, disabled: true },
          },
        }),
        route('/', APP),
      ],
    );
    expect((await get('/public')).status).toBe(200);
    expect((await get('/get')).status).toBe(403);
  });

  it('an unreachable authorization service: 403 (UAEX), or allowed with failure_mode_allow', async () => {
    await push([extAuthz('deadauth')], [route('/', APP)]);
    const r = await get('/get', { 'x-ext-authz': 'allow' });
    expect(r.status).toBe(403);
    expect(r.body).toBe('');
    expect(stat('http.http.ext_authz.error')).toBeGreaterThanOrEqual(1);
    await push(
      [extAuthz('deadauth', { failure_mode_allow: true, failure_mode_allow_header_add: true })],
      [route('/', APP)],
    );
    const allowed = await get('/headers');
    expect(allowed.status).toBe(200);
    expect(JSON.parse(allowed.body).headers['X-Envoy-Auth-Failure-Mode-Allowed']).toEqual(['true']);
    await push([extAuthz('deadauth', { status_on_error: { code: 'ServiceUnavailable' } })], [route('/', APP)]);
    expect((await get('/get')).status).toBe(503);
  });
});

describe('health_check', () => {
  it('answers matching requests itself: 200, then 503 after /healthcheck/fail', async () => {
    await push([HEALTH], [route('/', APP)]);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/get')).status).toBe(200);
    await fx.proxy.admin('/healthcheck/fail', 'POST');
    const r = await get('/healthz');
    expect(r.status).toBe(503);
    expect(r.headers['x-envoy-immediate-health-check-fail']).toBe('true');
    await fx.proxy.admin('/healthcheck/ok', 'POST');
    expect((await get('/healthz')).status).toBe(200);
  });
});

describe('filter chain validation', () => {
  // Envoy's rules for an HCM's http_filters, in its words: FilterChainHelper::processFilter
  // (source/common/http/filter_chain_helper.h) and Config::Utility::validateTerminalFilters
  // (source/common/config/utility.cc) name the entry, then its factory. An empty chain, or one whose only filters
  // after the last known one are skipped optional filters, Envoy accepts and never answers (its connection
  // manager's TODO: "The current returns no response if there is no router filter"); this proxy rejects it.
  const router = (name = 'envoy.filters.http.router', extra: J = {}) => ({
    name,
    typed_config: { '@type': `${T}router.v3.Router` },
    ...extra,
  });
  const optionalLua = { name: 'lua', is_optional: true, typed_config: { '@type': `${T}lua.v3.Lua` } };
  const NO_TERMINAL =
    'Error: the http filter chain does not end with a terminal filter (envoy.filters.http.router): Envoy accepts ' +
    'such a chain and never answers its requests; this proxy rejects it.';
  it.each([
    [
      'a filter after the router',
      [router(), CORS],
      'Error: terminal filter named envoy.filters.http.router of type envoy.filters.http.router must be the last filter in a http filter chain.',
    ],
    [
      'a router named otherwise, before an optional filter',
      [router('my-router'), optionalLua],
      'Error: terminal filter named my-router of type envoy.filters.http.router must be the last filter in a http filter chain.',
    ],
    [
      'no router: cors last',
      [CORS],
      'Error: non-terminal filter named envoy.filters.http.cors of type envoy.filters.http.cors is the last filter in a http filter chain.',
    ],
    [
      'the router disabled by default',
      [CORS, router('envoy.filters.http.router', { disabled: true })],
      'Error: the last (terminal) filter (envoy.filters.http.router) in the chain cannot be disabled by default.',
    ],
    ['an empty chain', [], NO_TERMINAL],
    ['only a skipped optional filter after cors', [CORS, optionalLua], NO_TERMINAL],
  ])('%s: NACKed in Envoy words, the previous listener kept', async (_case, filters, message) => {
    await push([], [route('/', APP)]);
    const l = listener(L, 0, { rds: L, filters: [] });
    l.filter_chains[0].filters[0].typed_config.http_filters = filters;
    const res = await fx.apply({ listeners: [l] });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      `Error adding/updating listener(s) ${L}: ${message}`,
    ]);
    const dump = JSON.parse((await fx.proxy.admin('/config_dump?resource=dynamic_listeners')).body);
    expect(dump.configs[0].error_state.details).toBe(message);
    expect((await get('/get')).status).toBe(200);
  });

  it('per-route configs of unknown types are rejected', async () => {
    await push([], [route('/', APP)]);
    const res2 = await fx.apply({
      routes: [
        routeConfig(L, [
          vhost(
            'www',
            ['www.example.com'],
            [
              route('/', APP, {
                typed_per_filter_config: { x: { '@type': `${T}lua.v3.LuaPerRoute`, disabled: true } },
              }),
            ],
          ),
        ]),
      ],
    });
    expect(res2.nacks[0]?.error_detail?.message).toContain("Didn't find a registered implementation");
    // The previous config still serves.
    expect((await get('/get')).status).toBe(200);
  });
});
