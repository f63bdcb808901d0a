// The HTTP filters behind the TrafficPolicy fields of issue 13 item 4, end to end through the proxy against the
// sample application, each configured as the control plane does (a filter in the HCM chain, the policy per route in
// typed_per_filter_config): rbac (Envoy's rbac_filter.cc: 403 `RBAC: access denied`,
// rbac_access_denied_matched_policy[...] details, rbac.allowed/denied stats).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

type J = Record<string, any>;

const APP = 'kube_sampleapp_sampleapp_8000';
const L = 'listener~8080';
const T = 'type.googleapis.com/envoy.extensions.filters.http.';
const ACCESS_LOG = {
  name: 'envoy.access_loggers.stdout',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
    log_format: { text_format_source: { inline_string: '%RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS%\n' } },
  },
};
let app: SampleApp;
let fx: XdsFixture;

async function push(filters: J[], routes: J[], clusters: J[] = [], endpoints: J[] = []) {
  const res = await fx.apply({
    clusters: [edsCluster(APP), ...clusters],
    endpoints: [cla(APP, [['127.0.0.1', app.port]]), ...endpoints],
    listeners: [listener(L, 0, { rds: L, filters, hcm: { access_log: [ACCESS_LOG] } })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], routes)])],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
}

async function nack(filters: J[], routes: J[]): Promise<string> {
  const res = await fx.apply({
    clusters: [edsCluster(APP)],
    endpoints: [cla(APP, [['127.0.0.1', app.port]])],
    listeners: [listener(L, 0, { rds: L, filters })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], routes)])],
  });
  return res.nacks.map((n) => n.error_detail?.message).join('\n');
}

const get = (path: string, headers: Record<string, string> = {}, method = 'GET', body?: string) =>
  httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}${path}`, { host: 'www.example.com', headers, method, body });
const lastAccess = () => (fx.proxy.access.at(-1) ?? '').trim();
const stat = (n: string) => fx.proxy.server.stats.value(n) ?? 0;

beforeAll(async () => {
  app = await startSampleApp();
  fx = await startXdsFixture();
  await push([], [route('/', APP)]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  await app?.close();
});

const RBAC = { name: 'envoy.filters.http.rbac', typed_config: { '@type': `${T}rbac.v3.RBAC` } };
const rbacRoute = (prefix: string, rules: J | undefined) =>
  route(prefix, APP, {
    typed_per_filter_config: {
      'envoy.filters.http.rbac': { '@type': `${T}rbac.v3.RBACPerRoute`, ...(rules ? { rbac: { rules } } : {}) },
    },
  });
const cidr = (address_prefix: string, prefix_len: number) => ({ address_prefix, prefix_len });

describe('rbac', () => {
  it('DENY by header and by client CIDR (x-forwarded-for): 403 RBAC: access denied naming the matched policy', async () => {
    await push(
      [RBAC],
      [
        rbacRoute('/', {
          action: 'DENY',
          policies: {
            scanners: {
              permissions: [{ header: { name: 'user-agent', string_match: { prefix: 'sqlmap' } } }],
              principals: [{ any: true }],
            },
            'blocked-net': { permissions: [{ any: true }], principals: [{ remote_ip: cidr('192.0.2.0', 24) }] },
          },
        }),
      ],
    );
    const allowedBefore = stat('http.http.rbac.allowed');
    const deniedBefore = stat('http.http.rbac.denied');
    const scan = await get('/get', { 'user-agent': 'sqlmap/1.7' });
    expect(scan.status).toBe(403);
    expect(scan.body).toBe('RBAC: access denied');
    expect(lastAccess()).toBe('403 - rbac_access_denied_matched_policy[scanners]');
    const net = await get('/get', { 'x-forwarded-for': '198.51.100.7, 192.0.2.44' });
    expect(net.status).toBe(403);
    expect(lastAccess()).toBe('403 - rbac_access_denied_matched_policy[blocked-net]');
    // Only the last x-forwarded-for entry is the client (no trusted hops): the first one is not matched.
    expect((await get('/get', { 'x-forwarded-for': '192.0.2.44, 198.51.100.7' })).status).toBe(200);
    expect((await get('/get', { 'user-agent': 'curl/8' })).status).toBe(200);
    expect(stat('http.http.rbac.denied') - deniedBefore).toBe(2);
    expect(stat('http.http.rbac.allowed') - allowedBefore).toBe(2);
  });

  it('ALLOW by direct remote CIDR or header: others get 403 with matched_policy[none]; a route without rules passes', async () => {
    await push(
      [RBAC],
      [
        rbacRoute('/open', undefined),
        rbacRoute('/', {
          policies: {
            office: {
              permissions: [{ header: { name: ':method', string_match: { exact: 'GET' } } }],
              principals: [
                { direct_remote_ip: cidr('10.0.0.0', 8) },
                { header: { name: 'x-admin', present_match: true } },
              ],
            },
          },
        }),
      ],
    );
    // The test client connects from 127.0.0.1, not in 10.0.0.0/8; x-forwarded-for does not count for direct_remote_ip.
    const denied = await get('/get', { 'x-forwarded-for': '10.1.2.3' });
    expect(denied.status).toBe(403);
    expect(lastAccess()).toBe('403 - rbac_access_denied_matched_policy[none]');
    expect((await get('/get', { 'x-admin': '1' })).status).toBe(200);
    // The permission is GET only.
    expect((await get('/post', { 'x-admin': '1' }, 'POST', 'x')).status).toBe(403);
    expect((await get('/open/x')).status).not.toBe(403);
    await push(
      [RBAC],
      [
        rbacRoute('/', {
          policies: {
            loopback: { permissions: [{ any: true }], principals: [{ direct_remote_ip: cidr('127.0.0.0', 8) }] },
          },
        }),
      ],
    );
    expect((await get('/get')).status).toBe(200);
  });

  it('NACKs what it cannot enforce, naming the field; the last good config keeps serving', async () => {
    const msg = await nack(
      [RBAC],
      [rbacRoute('/', { policies: { p: { permissions: [{ any: true }], principals: [{ authenticated: {} }] } } })],
    );
    expect(msg).toContain('principals[0]: principal authenticated is not supported');
    const bad = await nack(
      [RBAC],
      [
        rbacRoute('/', {
          policies: { p: { permissions: [{ any: true }], principals: [{ remote_ip: cidr('10.0.0.300', 8) }] } },
        }),
      ],
    );
    expect(bad).toContain('remote_ip.address_prefix: malformed IP address: 10.0.0.300');
    expect((await get('/get')).status).toBe(200);
  });
});
