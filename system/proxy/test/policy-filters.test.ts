// The HTTP filters behind the TrafficPolicy fields of issue 13 item 4, end to end through the proxy against the
// sample application, each configured as the control plane does (a filter in the HCM chain, the policy per route in
// typed_per_filter_config): rbac (Envoy's rbac_filter.cc: 403 `RBAC: access denied`,
// rbac_access_denied_matched_policy[...] details, rbac.allowed/denied stats); jwt_authn (filter.cc and jwt_verify_lib's
// statuses: 401 `Jwt is expired` ..., claims to headers, remote JWKS through a cluster; tokens made with node:crypto);
// buffer (413 request_payload_too_large); compressor with gzip (compressor_filter.cc's conditions, inflated with
// node:zlib); header_mutation (templates with the formatter's command operators).
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
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
import { testSigner } from '../testing/jwt.ts';

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
/** A request header as the sample application's /headers echoes it (values as lists, names capitalized). */
function echoed(body: string, name: string): string | undefined {
  const h = JSON.parse(body).headers as Record<string, string | string[]>;
  const k = Object.keys(h).find((x) => x.toLowerCase() === name);
  return k === undefined ? undefined : ([] as string[]).concat(h[k]!).join(',');
}
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
            // Whitespace in a policy id becomes '_' in the details (Envoy's RBAC::responseDetail).
            'blocked net': { permissions: [{ any: true }], principals: [{ remote_ip: cidr('192.0.2.0', 24) }] },
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
    expect(lastAccess()).toBe('403 - rbac_access_denied_matched_policy[blocked_net]');
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

const JWT = (providers: J, requirement_map: J) => ({
  name: 'envoy.filters.http.jwt_authn',
  typed_config: { '@type': `${T}jwt_authn.v3.JwtAuthentication`, providers, requirement_map },
});
const jwtRoute = (prefix: string, requirement: string | undefined) =>
  route(prefix, APP, {
    typed_per_filter_config: {
      'envoy.filters.http.jwt_authn': {
        '@type': `${T}jwt_authn.v3.PerRouteConfig`,
        ...(requirement ? { requirement_name: requirement } : { disabled: true }),
      },
    },
  });
const now = () => Math.floor(Date.now() / 1000);

describe('jwt_authn', () => {
  const signer = testSigner('k1');
  const other = testSigner('k1');
  const provider = {
    issuer: 'https://idp.example.com',
    audiences: ['api'],
    local_jwks: { inline_string: signer.jwks },
    claim_to_headers: [
      { header_name: 'x-user', claim_name: 'sub' },
      { header_name: 'x-groups', claim_name: 'groups' },
    ],
  };
  const claims = (extra: J = {}) => ({
    iss: 'https://idp.example.com',
    aud: 'api',
    sub: 'alice',
    exp: now() + 300,
    ...extra,
  });

  it('401 with Envoy’s status text, www-authenticate and details for a missing, expired, forged or foreign token; 403 for an audience', async () => {
    await push(
      [JWT({ corp: provider }, { corp: { provider_name: 'corp' } })],
      [jwtRoute('/open', undefined), jwtRoute('/', 'corp')],
    );
    const deniedBefore = stat('http.http.jwt_authn.denied');
    const missing = await get('/get?x=1');
    expect([missing.status, missing.body]).toEqual([401, 'Jwt is missing']);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="http://www.example.com/get?x=1"');
    expect(lastAccess()).toBe('401 - jwt_authn_access_denied{Jwt_is_missing}');
    const expired = await get('/get', { authorization: `Bearer ${signer.token(claims({ exp: now() - 120 }))}` });
    expect([expired.status, expired.body]).toEqual([401, 'Jwt is expired']);
    expect(expired.headers['www-authenticate']).toBe(
      'Bearer realm="http://www.example.com/get", error="invalid_token"',
    );
    expect(lastAccess()).toBe('401 - jwt_authn_access_denied{Jwt_is_expired}');
    // Within the 60 s clock skew it is still valid.
    expect((await get('/get', { authorization: `Bearer ${signer.token(claims({ exp: now() - 30 }))}` })).status).toBe(
      200,
    );
    const forged = await get('/get', { authorization: `Bearer ${other.token(claims())}` });
    expect([forged.status, forged.body]).toEqual([401, 'Jwt verification fails']);
    const foreign = await get('/get', { authorization: `Bearer ${signer.token(claims({ iss: 'https://evil' }))}` });
    expect([foreign.status, foreign.body]).toEqual([401, 'Jwt issuer is not configured']);
    const unknownKid = await get('/get', { authorization: `Bearer ${signer.token(claims(), { kid: 'k2' })}` });
    expect(unknownKid.body).toBe("Jwks doesn't have key to match kid or alg from Jwt");
    const notJwt = await get('/get', { authorization: 'Bearer abc.def' });
    expect(notJwt.body).toBe('Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections');
    const aud = await get('/get', { authorization: `Bearer ${signer.token(claims({ aud: ['web'] }))}` });
    expect([aud.status, aud.body]).toEqual([403, 'Audiences in Jwt are not allowed']);
    expect(stat('http.http.jwt_authn.denied') - deniedBefore).toBe(7);
    // A route whose PerRouteConfig disables the filter is not checked.
    expect((await get('/open/x')).status).not.toBe(401);
  });

  it('a valid token passes: claims to headers, the Authorization header removed (forward: false), or kept with forward', async () => {
    await push([JWT({ corp: provider }, { corp: { provider_name: 'corp' } })], [jwtRoute('/', 'corp')]);
    const allowedBefore = stat('http.http.jwt_authn.allowed');
    const ok = await get('/headers', {
      authorization: `Bearer ${signer.token(claims({ groups: ['eng', 'ops'] }))}`,
    });
    expect(ok.status).toBe(200);
    expect(echoed(ok.body, 'x-user')).toBe('alice');
    // Only primitive claims are copied (authenticator.cc addJWTClaimToHeader).
    expect(echoed(ok.body, 'x-groups')).toBeUndefined();
    // Envoy adds the claim's value: a header the client sent keeps its own beside it (strip it with a header
    // modifier placed before jwt_authn if that matters).
    const spoofed = await get('/headers', { authorization: `Bearer ${signer.token(claims())}`, 'x-user': 'mallory' });
    expect(echoed(spoofed.body, 'x-user')).toBe('mallory,alice');
    expect(echoed(ok.body, 'authorization')).toBeUndefined();
    expect(stat('http.http.jwt_authn.allowed') - allowedBefore).toBe(2);
    await push(
      [JWT({ corp: { ...provider, forward: true } }, { corp: { provider_name: 'corp' } })],
      [jwtRoute('/', 'corp')],
    );
    const fwd = await get('/headers', { authorization: `Bearer ${signer.token(claims())}` });
    expect(echoed(fwd.body, 'authorization')).toMatch(/^Bearer /);
  });

  it('remote_jwks: fetched from its cluster once and cached; requires_any over two providers; a fetch failure is 401', async () => {
    let fetches = 0;
    const idp = http.createServer((req, res) => {
      fetches++;
      if (req.url !== '/jwks.json') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(other.jwks);
    });
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    try {
      const idpPort = (idp.address() as AddressInfo).port;
      const remote = (cluster: string) => ({
        issuer: 'https://partner.example.com',
        remote_jwks: {
          http_uri: { uri: 'http://idp.default.svc:8080/jwks.json', cluster, timeout: '2s' },
          cache_duration: '300s',
        },
      });
      await push(
        [
          JWT(
            { corp: provider, partner: remote('idp'), dead: remote('nowhere') },
            {
              any: { requires_any: { requirements: [{ provider_name: 'corp' }, { provider_name: 'partner' }] } },
              dead: { provider_name: 'dead' },
            },
          ),
        ],
        [jwtRoute('/dead', 'dead'), jwtRoute('/', 'any')],
        [edsCluster('idp')],
        [cla('idp', [['127.0.0.1', idpPort]])],
      );
      const partnerToken = other.token({ iss: 'https://partner.example.com', exp: now() + 60 });
      expect((await get('/get', { authorization: `Bearer ${partnerToken}` })).status).toBe(200);
      expect((await get('/get', { authorization: `Bearer ${partnerToken}` })).status).toBe(200);
      expect((await get('/get', { authorization: `Bearer ${signer.token(claims())}` })).status).toBe(200);
      expect(fetches).toBe(1);
      expect(stat('http.http.jwt_authn.jwks_fetch_success')).toBeGreaterThanOrEqual(1);
      const dead = await get('/dead', {
        authorization: `Bearer ${other.token({ iss: 'https://partner.example.com' })}`,
      });
      expect([dead.status, dead.body]).toEqual([401, 'Jwks remote fetch is failed']);
    } finally {
      await new Promise((r) => idp.close(r));
    }
  });

  it('NACKs an invalid inline JWKS and an unknown provider in a requirement', async () => {
    const bad = await nack(
      [JWT({ p: { issuer: 'i', local_jwks: { inline_string: '{"keys": 1}' } } }, { r: { provider_name: 'p' } })],
      [jwtRoute('/', 'r')],
    );
    expect(bad).toContain("Issuer 'i' in jwt_authn config has invalid local jwks: Jwks has no [keys] array");
    const unknown = await nack(
      [JWT({ p: { local_jwks: { inline_string: signer.jwks } } }, { r: { provider_name: 'q' } })],
      [jwtRoute('/', 'r')],
    );
    expect(unknown).toContain("Required provider ['q'] is not configured.");
  });
});

/** A raw HTTP/1.1 exchange (a chunked request body, gzip bytes): status, headers and the body as bytes. */
function raw(
  path: string,
  o: { method?: string; headers?: Record<string, string>; chunks?: string[] } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: fx.proxy.port(L),
        path,
        method: o.method ?? 'GET',
        headers: { host: 'www.example.com', ...(o.headers ?? {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    for (const c of o.chunks ?? []) req.write(c);
    req.end();
  });
}

describe('buffer', () => {
  const BUFFER = {
    name: 'envoy.filters.http.buffer',
    typed_config: { '@type': `${T}buffer.v3.Buffer`, max_request_bytes: 1 << 20 },
    disabled: true,
  };
  const limited = (prefix: string, max: number) =>
    route(prefix, APP, {
      typed_per_filter_config: {
        'envoy.filters.http.buffer': { '@type': `${T}buffer.v3.BufferPerRoute`, buffer: { max_request_bytes: max } },
      },
    });

  it('413 Payload Too Large (request_payload_too_large) over the route’s limit; under it the body arrives whole with a content-length', async () => {
    await push([BUFFER], [limited('/anything/small', 1024), route('/', APP)]);
    const before = stat('http.http.downstream_rq_too_large');
    const big = await get('/anything/small', { 'content-type': 'text/plain' }, 'POST', 'x'.repeat(2000));
    expect([big.status, big.body]).toEqual([413, 'Payload Too Large']);
    expect(lastAccess()).toBe('413 - request_payload_too_large');
    expect(stat('http.http.downstream_rq_too_large') - before).toBe(1);
    // Chunked and over the limit only in its second chunk.
    const chunked = await raw('/anything/small', { method: 'POST', chunks: ['a'.repeat(800), 'b'.repeat(800)] });
    expect(chunked.status).toBe(413);
    // Chunked and under it: buffered, sent upstream with a content-length.
    const ok = await raw('/anything/small', { method: 'POST', chunks: ['a'.repeat(300), 'b'.repeat(300)] });
    expect(ok.status).toBe(200);
    expect(echoed(ok.body.toString(), 'content-length')).toBe('600');
    expect(echoed(ok.body.toString(), 'transfer-encoding')).toBeUndefined();
    // The filter is disabled in the chain: a route without BufferPerRoute takes any size.
    expect((await get('/anything/free', {}, 'POST', 'x'.repeat(5000))).status).toBe(200);
  });
});

describe('compressor (gzip)', () => {
  const COMPRESSOR = (extra: J = {}) => ({
    name: 'envoy.filters.http.compressor',
    typed_config: {
      '@type': `${T}compressor.v3.Compressor`,
      compressor_library: {
        name: 'gzip',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip' },
      },
      response_direction_config: { common_config: { min_content_length: 100 } },
      ...extra,
    },
  });
  const c = (n: string) => stat(`http.http.compressor.gzip.gzip.${n}`);

  it('gzips a JSON response for a client that accepts gzip: content-encoding, vary, no content-length; the body inflates to the original', async () => {
    await push([COMPRESSOR()], [route('/', APP)]);
    const before = c('compressed');
    const plain = await raw('/stream/20');
    const r = await raw('/stream/20', { headers: { 'accept-encoding': 'br;q=1, gzip;q=0.8' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.headers['content-length']).toBeUndefined();
    const inflated = gunzipSync(r.body).toString();
    expect(inflated.split('\n').length).toBe(plain.body.toString().split('\n').length);
    expect(r.body.length).toBeLessThan(inflated.length);
    expect(c('compressed') - before).toBe(1);
    expect(c('header_gzip')).toBeGreaterThanOrEqual(1);
    // A strong etag is removed from a compressed response, a weak one kept (sanitizeEtagHeader).
    const pad = 'x'.repeat(200);
    const strong = await raw(`/response-headers?ETag=%22v1%22&pad=${pad}`, { headers: { 'accept-encoding': 'gzip' } });
    expect([strong.headers['content-encoding'], strong.headers.etag]).toEqual(['gzip', undefined]);
    const weak = await raw(`/response-headers?ETag=W/%22v1%22&pad=${pad}`, { headers: { 'accept-encoding': 'gzip' } });
    expect([weak.headers['content-encoding'], weak.headers.etag]).toEqual(['gzip', 'W/"v1"']);
    expect(c('total_uncompressed_bytes')).toBeGreaterThanOrEqual(inflated.length);
    expect(lastAccess()).toBe('200 - via_upstream');
  });

  it('leaves alone (no vary): no Accept-Encoding, gzip;q=0, identity preferred, a small body, a type not in the list, an encoded body', async () => {
    await push(
      [COMPRESSOR({ response_direction_config: { common_config: { min_content_length: 1000 } } })],
      [route('/', APP)],
    );
    const none = await raw('/stream/20');
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.headers.vary).toBeUndefined();
    const refused = await raw('/stream/20', { headers: { 'accept-encoding': 'gzip;q=0, *' } });
    expect(refused.headers['content-encoding']).toBeUndefined();
    const identityBefore = c('header_identity');
    const identity = await raw('/stream/20', { headers: { 'accept-encoding': 'identity;q=1, gzip;q=0.5' } });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(c('header_identity') - identityBefore).toBe(1);
    const tooSmall = c('content_length_too_small');
    const tiny = await raw('/response-headers?x=1', { headers: { 'accept-encoding': 'gzip' } });
    expect(Number(tiny.headers['content-length'])).toBeLessThan(1000);
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(c('content_length_too_small') - tooSmall).toBe(1);
    const bytes = await raw('/bytes/4096', { headers: { 'accept-encoding': '*' } });
    expect(bytes.headers['content-encoding']).toBeUndefined();
    expect(bytes.body.length).toBe(4096);
    const encoded = await raw('/response-headers?Content-Encoding=br&pad=' + 'x'.repeat(200), {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(encoded.headers['content-encoding']).toBe('br');
  });

  it('over HTTP/2 (h2c) too: the gzip body goes out in DATA frames and inflates to the original', async () => {
    await push([COMPRESSOR()], [route('/', APP)]);
    const session = http2.connect(`http://127.0.0.1:${fx.proxy.port(L)}`);
    try {
      const { headers, body } = await new Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }>(
        (resolve, reject) => {
          const req = session.request({
            ':path': '/stream/20',
            ':authority': 'www.example.com',
            'accept-encoding': 'gzip',
          });
          const chunks: Buffer[] = [];
          let headers: http2.IncomingHttpHeaders = {};
          req.on('response', (h) => {
            headers = h;
          });
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => resolve({ headers, body: Buffer.concat(chunks) }));
          req.on('error', reject);
          req.end();
        },
      );
      expect(headers[':status']).toBe(200);
      expect(headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(body).toString().trim().split('\n')).toHaveLength(20);
    } finally {
      session.close();
    }
  });

  it('CompressorPerRoute.disabled turns it off on a route', async () => {
    await push(
      [
        COMPRESSOR({
          response_direction_config: { common_config: { min_content_length: 10, content_type: ['text/plain'] } },
        }),
      ],
      [
        route('/off', APP, {
          typed_per_filter_config: {
            'envoy.filters.http.compressor': { '@type': `${T}compressor.v3.CompressorPerRoute`, disabled: true },
          },
        }),
      ],
    );
    expect((await raw('/stream/5', { headers: { 'accept-encoding': 'gzip' } })).status).toBe(404);
    const off = await raw('/off/stream/5', { headers: { 'accept-encoding': 'gzip' } });
    expect(off.headers['content-encoding']).toBeUndefined();
  });

  it('NACKs another compression library and request compression', async () => {
    const msg = await nack(
      [
        COMPRESSOR({
          compressor_library: {
            name: 'br',
            typed_config: { '@type': 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli' },
          },
        }),
      ],
      [route('/', APP)],
    );
    expect(msg).toContain(
      'compressor.compressor_library: type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli is not supported',
    );
  });
});

describe('header_mutation (transformation)', () => {
  const HM = {
    name: 'envoy.filters.http.header_mutation',
    typed_config: { '@type': `${T}header_mutation.v3.HeaderMutation` },
  };
  const mutated = (prefix: string, mutations: J) =>
    route(prefix, APP, {
      typed_per_filter_config: {
        'envoy.filters.http.header_mutation': { '@type': `${T}header_mutation.v3.HeaderMutationPerRoute`, mutations },
      },
    });

  it('request and response templates with command operators, in order: remove, overwrite, append', async () => {
    await push(
      [HM],
      [
        mutated('/', {
          request_mutations: [
            { remove: 'x-debug' },
            {
              append: {
                header: { key: 'x-client', value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%' },
                append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
              },
            },
            { append: { header: { key: 'x-user-copy', value: 'user=%REQ(x-user)%' } } },
          ],
          response_mutations: [
            { append: { header: { key: 'x-path', value: '%REQ(:PATH)%' } } },
            { remove: 'x-powered-by' },
          ],
        }),
      ],
    );
    const r = await get('/headers?q=1', { 'x-debug': '1', 'x-client': 'spoofed', 'x-user': 'bob' });
    expect(r.status).toBe(200);
    expect(echoed(r.body, 'x-debug')).toBeUndefined();
    expect(echoed(r.body, 'x-client')).toBe('127.0.0.1');
    expect(echoed(r.body, 'x-user-copy')).toBe('user=bob');
    expect(r.headers['x-path']).toBe('/headers?q=1');
  });

  it('NACKs an unknown command operator and a host mutation', async () => {
    const msg = await nack(
      [HM],
      [mutated('/', { request_mutations: [{ append: { header: { key: 'x', value: '%NOPE%' } } }] })],
    );
    expect(msg).toContain('Not supported field in StreamInfo: NOPE');
    const host = await nack(
      [HM],
      [mutated('/', { request_mutations: [{ append: { header: { key: 'host', value: 'x' } } }] })],
    );
    expect(host).toContain("':-prefixed' or host headers may not be modified");
  });
});
