// ext_authz with a gRPC authorization service (grpc_service.envoy_grpc), end to end through the proxy: against the
// ext-auth sample's gRPC form, and against a test server that records each CheckRequest and answers what a case
// needs. Behaviour checked against Envoy's ext_authz filter (source/extensions/filters/http/ext_authz/ext_authz.cc,
// filters/common/ext_authz/ext_authz_grpc_impl.cc and check_request_utils.cc): what the CheckRequest carries, how
// OkResponse's header mutations and DeniedResponse's status/headers/body apply, failure_mode_allow, the 200 ms
// default timeout and status_on_error on a failed call, the 403 flag UAEX.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationService } from '../../extauth/grpc.ts';
import { type ExtAuth, startExtAuth } from '../../extauth/main.ts';
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
const T = 'type.googleapis.com/envoy.extensions.filters.http.';
const h2 = H2_CLUSTER;

let app: SampleApp;
let authz: ExtAuth;
let fx: XdsFixture;
let deadPort: number;
let test: grpc.Server;
let testPort: number;
const seen: J[] = [];
/** What the test server answers next (after `delayMs`). */
let answer: { delayMs?: number; response: J; error?: grpc.ServiceError } = { response: { status: { code: 0 } } };

const extAuthz = (cluster: string, extra: J = {}, grpcExtra: J = {}) => ({
  name: 'envoy.filters.http.ext_authz',
  typed_config: {
    '@type': `${T}ext_authz.v3.ExtAuthz`,
    grpc_service: { envoy_grpc: { cluster_name: cluster }, timeout: '5s', ...grpcExtra },
    transport_api_version: 'V3',
    ...extra,
  },
});

async function push(filters: J[], routes: J[] = [route('/', APP)]) {
  const res = await fx.apply({
    clusters: [
      edsCluster(APP),
      edsCluster('extauth-grpc', h2),
      edsCluster('test-grpc', h2),
      edsCluster('dead-grpc', h2),
      edsCluster('extauth-http1'),
    ],
    endpoints: [
      cla(APP, [['127.0.0.1', app.port]]),
      cla('extauth-grpc', [['127.0.0.1', authz.grpcPort!]]),
      cla('test-grpc', [['127.0.0.1', testPort]]),
      cla('dead-grpc', [['127.0.0.1', deadPort]]),
      cla('extauth-http1', [['127.0.0.1', authz.grpcPort!]]),
    ],
    listeners: [listener(L, 0, { rds: L, filters })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], routes)])],
  });
  return res.nacks.map((n) => n.error_detail?.message);
}

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}${path}`, { host: 'www.example.com', headers, method });
const stat = (n: string) => fx.proxy.server.stats.value(n) ?? 0;
const lastAccess = () => fx.proxy.access.at(-1) ?? '';
const upstreamHeaders = (body: string) => JSON.parse(body).headers as Record<string, string[]>;

beforeAll(async () => {
  [app, authz, deadPort] = await Promise.all([
    startSampleApp(),
    startExtAuth({ log: false, grpcPort: 0 }),
    closedPort(),
  ]);
  test = new grpc.Server();
  test.addService(authorizationService(), {
    Check(call: grpc.ServerUnaryCall<J, J>, done: grpc.sendUnaryData<J>) {
      seen.push({ request: call.request, metadata: call.metadata.getMap(), authority: call.getHost() });
      const a = answer;
      setTimeout(() => (a.error ? done(a.error) : done(null, a.response)), a.delayMs ?? 0);
    },
  });
  testPort = await new Promise<number>((resolve, reject) =>
    test.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  fx = await startXdsFixture();
  expect(await push([])).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  test?.forceShutdown();
  await Promise.all([app?.close(), authz?.close()]);
});

describe('ext_authz over gRPC with the ext-auth sample', () => {
  it('allows with x-ext-authz: allow (the OkResponse header reaches the upstream), denies 403 UAEX otherwise', async () => {
    expect(
      await push([extAuthz('extauth-grpc', { allowed_headers: { patterns: [{ exact: 'x-ext-authz' }] } })]),
    ).toEqual([]);
    const ok = await get('/headers', { 'x-ext-authz': 'allow' });
    expect(ok.status).toBe(200);
    expect(upstreamHeaders(ok.body)['X-Ext-Authz-Check-Result']).toEqual(['allowed']);
    const denied = await get('/headers', { 'x-ext-authz': 'deny' });
    expect(denied.status).toBe(403);
    expect(denied.headers['x-ext-authz-check-result']).toBe('denied');
    expect(denied.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(denied.body).toMatch(/^denied by ext_authz: header x-ext-authz is "deny", not allow/);
    expect(lastAccess()).toContain(' 403 UAEX ');
    expect((await get('/headers')).status).toBe(403);
    expect(stat('http.http.ext_authz.ok')).toBe(1);
    expect(stat('http.http.ext_authz.denied')).toBe(2);
    // The call went through the cluster, as Envoy's envoy_grpc client does: its stats count it.
    expect(stat('cluster.extauth-grpc.upstream_rq_total')).toBe(3);
    expect(stat('cluster.extauth-grpc.upstream_cx_http2_total')).toBeGreaterThanOrEqual(1);
  });
});

describe('ext_authz over gRPC: the CheckRequest and the CheckResponse', () => {
  it('sends the attributes Envoy fills: addresses, time, http (pseudo headers, path, host, protocol), context_extensions', async () => {
    answer = { response: { status: { code: 0 } } };
    const per = {
      '@type': `${T}ext_authz.v3.ExtAuthzPerRoute`,
      check_settings: { context_extensions: { team: 'blue' } },
    };
    expect(
      await push(
        [extAuthz('test-grpc', {}, { envoy_grpc: { cluster_name: 'test-grpc', authority: 'authz.local' } })],
        [route('/', APP, { typed_per_filter_config: { 'envoy.filters.http.ext_authz': per } })],
      ),
    ).toEqual([]);
    seen.length = 0;
    const r = await get('/anything/x?a=1', { 'x-user': 'ann' }, 'POST');
    expect(r.status).toBe(200);
    expect(seen).toHaveLength(1);
    const { request, authority, metadata } = seen[0]!;
    expect(authority).toBe('authz.local');
    expect(metadata['grpc-timeout']).toBeUndefined(); // grpc-js keeps it out of the metadata, but honours it
    const a = request.attributes;
    expect(a.source.address.socket_address.address).toBe('127.0.0.1');
    expect(a.source.address.socket_address.port_value).toBeGreaterThan(0);
    expect(a.destination.address.socket_address.port_value).toBe(fx.proxy.port(L));
    expect(Number(a.request.time.seconds)).toBeGreaterThan(1_700_000_000);
    expect(a.context_extensions).toEqual({ team: 'blue' });
    const h = a.request.http;
    expect(h).toMatchObject({ method: 'POST', path: '/anything/x?a=1', host: 'www.example.com', scheme: 'http' });
    expect(h.protocol).toBe('HTTP/1.1');
    expect(h.headers).toMatchObject({
      ':authority': 'www.example.com',
      ':method': 'POST',
      ':path': '/anything/x?a=1',
      'x-user': 'ann',
    });
    expect(h.id).not.toBe('');
  });

  it('OkResponse: headers set, appended (only to an existing header), removed; response_headers_to_add to the client', async () => {
    expect(await push([extAuthz('test-grpc')])).toEqual([]);
    answer = {
      response: {
        status: { code: 0 },
        ok_response: {
          headers: [
            { header: { key: 'x-user-id', value: '42' } },
            { header: { key: 'x-tag', value: 'b' }, append: { value: true } },
            { header: { key: 'x-missing', value: 'z' }, append: { value: true } },
          ],
          headers_to_remove: ['x-secret'],
          response_headers_to_add: [{ header: { key: 'x-authz-said', value: 'yes' } }],
        },
      },
    };
    const r = await get('/headers', { 'x-tag': 'a', 'x-secret': 's', 'x-user-id': 'forged' });
    expect(r.status).toBe(200);
    const up = upstreamHeaders(r.body);
    expect(up['X-User-Id']).toEqual(['42']);
    expect(up['X-Tag']).toEqual(['a,b']); // appended as Envoy's appendCopy does, one value joined with ','
    expect(up['X-Missing']).toBeUndefined();
    expect(up['X-Secret']).toBeUndefined();
    expect(r.headers['x-authz-said']).toBe('yes');
  });

  it('DeniedResponse: its HTTP status, headers and body; 403 when it sets no status', async () => {
    answer = {
      response: {
        status: { code: 16 },
        denied_response: {
          status: { code: 'Unauthorized' },
          headers: [{ header: { key: 'www-authenticate', value: 'Bearer' } }],
          body: 'log in first',
        },
      },
    };
    const r = await get('/get');
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer');
    expect(r.body).toBe('log in first');
    expect(lastAccess()).toContain(' 401 UAEX ');
    answer = { response: { status: { code: 7 } } };
    const d = await get('/get');
    expect(d.status).toBe(403);
    expect(d.body).toBe('');
  });
});

describe('ext_authz over gRPC: a failed call', () => {
  it('a service that is down: 403 UAEX ext_authz_error; failure_mode_allow lets it through; status_on_error', async () => {
    expect(await push([extAuthz('dead-grpc')])).toEqual([]);
    const before = stat('http.http.ext_authz.error');
    const r = await get('/get', { 'x-ext-authz': 'allow' });
    expect(r.status).toBe(403);
    expect(r.body).toBe('');
    expect(stat('http.http.ext_authz.error')).toBe(before + 1);
    expect(
      await push([extAuthz('dead-grpc', { failure_mode_allow: true, failure_mode_allow_header_add: true })]),
    ).toEqual([]);
    const allowed = await get('/headers');
    expect(allowed.status).toBe(200);
    expect(upstreamHeaders(allowed.body)['X-Envoy-Auth-Failure-Mode-Allowed']).toEqual(['true']);
    expect(await push([extAuthz('dead-grpc', { status_on_error: { code: 'ServiceUnavailable' } })])).toEqual([]);
    expect((await get('/get')).status).toBe(503);
  });

  it('a slow service: the grpc_service timeout (200 ms by default) ends the call as an error', async () => {
    expect(
      await push([
        {
          ...extAuthz('test-grpc'),
          typed_config: {
            ...extAuthz('test-grpc').typed_config,
            grpc_service: { envoy_grpc: { cluster_name: 'test-grpc' } },
          },
        },
      ]),
    ).toEqual([]);
    answer = { delayMs: 1500, response: { status: { code: 0 } } };
    const t0 = Date.now();
    const r = await get('/get');
    expect(r.status).toBe(403);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(stat('cluster.test-grpc.upstream_rq_timeout')).toBeGreaterThanOrEqual(1);
    answer = { response: { status: { code: 0 } } };
  });

  it('a gRPC error status from the service is an error, not a denial', async () => {
    expect(await push([extAuthz('test-grpc')])).toEqual([]);
    answer = { response: {}, error: Object.assign(new Error('busy'), { code: grpc.status.UNAVAILABLE }) as any };
    const before = stat('http.http.ext_authz.error');
    const deniedBefore = stat('http.http.ext_authz.denied');
    const r = await get('/get');
    expect(r.status).toBe(403);
    expect(r.body).toBe('');
    expect(stat('http.http.ext_authz.error')).toBe(before + 1);
    expect(stat('http.http.ext_authz.denied')).toBe(deniedBefore);
    answer = { response: { status: { code: 0 } } };
  });

  it('an HTTP/1.1 cluster cannot carry the call: an error', async () => {
    expect(await push([extAuthz('extauth-http1')])).toEqual([]);
    // An HTTP/1.1 cluster cannot carry gRPC: the call fails, as a failed call.
    const before = stat('http.http.ext_authz.error');
    expect((await get('/get', { 'x-ext-authz': 'allow' })).status).toBe(403);
    expect(stat('http.http.ext_authz.error')).toBe(before + 1);
  });

  it('google_grpc is NACKed with a message saying so', async () => {
    const nacks = await push([
      {
        name: 'envoy.filters.http.ext_authz',
        typed_config: {
          '@type': `${T}ext_authz.v3.ExtAuthz`,
          grpc_service: { google_grpc: { target_uri: 'authz:9001', stat_prefix: 'authz' } },
        },
      },
    ]);
    expect(nacks.join(' ')).toContain('google_grpc is not supported');
  });
});
