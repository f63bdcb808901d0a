// The proxy's local replies to gRPC requests, as Envoy gives them (source/common/http/utility.cc sendLocalReply with
// is_grpc; source/common/grpc/status.cc httpToGrpcStatus): a request with content-type application/grpc that would get
// an HTTP error from the proxy gets `200` with `content-type: application/grpc`, `grpc-status` (no route 404 → 12
// UNIMPLEMENTED, a direct 503 → 14 UNAVAILABLE, a direct 500 → 2 UNKNOWN, an undefined cluster's 503 → 14) and the body
// as a percent-encoded `grpc-message`, and no body; gRPC-Web and other requests keep their HTTP replies.
import * as grpc from '@grpc/grpc-js';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPC_ECHO_SERVICE, grpcEchoService } from '../../echo/grpc.ts';
import { grpcLocalReplyHeaders, httpToGrpcStatus } from '../http/grpc-local-reply.ts';
import { cla, edsCluster, listener, routeConfig, startXdsFixture, vhost, type XdsFixture } from '../testing/harness.ts';

const LISTENER = 'listener~8080';
let fx: XdsFixture;
let port: number;
const dispatcher = new Agent();

beforeAll(async () => {
  fx = await startXdsFixture();
  const res = await fx.apply({
    // One cluster (no endpoints), so the fixture's EDS round completes; the routes never use it.
    clusters: [edsCluster('unused')],
    endpoints: [cla('unused', [])],
    listeners: [listener(LISTENER, 0, { rds: LISTENER })],
    routes: [
      routeConfig(LISTENER, [
        vhost(
          'grpc',
          ['grpc.example.com'],
          [
            { match: { prefix: '/unavailable.Svc/' }, direct_response: { status: 503 } },
            {
              match: { prefix: '/broken.Svc/' },
              direct_response: { status: 500, body: { inline_string: 'bad 100%\n' } },
            },
            { match: { prefix: '/nocluster.Svc/' }, route: { cluster: 'blackhole-cluster' } },
            { match: { path: `/${GRPC_ECHO_SERVICE}/EchoTwo` }, direct_response: { status: 503 } },
          ],
        ),
      ]),
    ],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  port = fx.proxy.port(LISTENER);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await dispatcher.close();
  await fx?.close();
});

async function call(path: string, contentType: string) {
  const res = await request(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { host: 'grpc.example.com', 'content-type': contentType, te: 'trailers' },
    body: Buffer.from([0, 0, 0, 0, 0]),
    dispatcher,
  });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

describe('gRPC local replies (Envoy sendLocalReply, is_grpc)', () => {
  it('no route: 200, grpc-status 12 (UNIMPLEMENTED), no body', async () => {
    const r = await call('/other.Svc/Method', 'application/grpc');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/grpc');
    expect(r.headers['grpc-status']).toBe('12');
    expect(r.headers['grpc-message']).toBeUndefined();
    expect(r.body).toBe('');
  });

  it('a direct 503 is UNAVAILABLE (14); application/grpc+proto is gRPC too', async () => {
    const r = await call('/unavailable.Svc/M', 'application/grpc+proto');
    expect([r.status, r.headers['grpc-status']]).toEqual([200, '14']);
  });

  it('a direct 500 is UNKNOWN (2) with its body as a percent-encoded grpc-message', async () => {
    const r = await call('/broken.Svc/M', 'application/grpc');
    expect([r.status, r.headers['grpc-status'], r.headers['grpc-message']]).toEqual([200, '2', 'bad 100%25%0A']);
    expect(r.body).toBe('');
  });

  it('an undefined cluster (503 NC) is UNAVAILABLE', async () => {
    const r = await call('/nocluster.Svc/M', 'application/grpc');
    expect([r.status, r.headers['grpc-status']]).toEqual([200, '14']);
  });

  it('gRPC-Web and plain HTTP requests keep the HTTP reply', async () => {
    expect((await call('/other.Svc/Method', 'application/grpc-web')).status).toBe(404);
    expect((await call('/other.Svc/Method', 'application/json')).status).toBe(404);
  });

  it('a grpc-js client over h2c reads them as gRPC statuses (trailers-only, END_STREAM on the HEADERS frame)', async () => {
    const Client = grpcEchoService();
    const c = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
      'grpc.default_authority': 'grpc.example.com',
    });
    const rpc = (method: string) =>
      new Promise<{ code: number; server?: string; details?: string }>((resolve) => {
        (c as any)[method](
          {},
          new grpc.Metadata(),
          { deadline: Date.now() + 10_000 },
          (err: grpc.ServiceError | null) =>
            resolve({
              code: err?.code ?? 0,
              server: err?.metadata?.get('server')[0]?.toString(),
              details: err?.details,
            }),
        );
      });
    try {
      expect(await rpc('Echo')).toEqual({ code: grpc.status.UNIMPLEMENTED, server: 'envoy', details: '' });
      expect(await rpc('EchoTwo')).toEqual({ code: grpc.status.UNAVAILABLE, server: 'envoy', details: '' });
    } finally {
      c.close();
    }
  });

  it("maps HTTP statuses as gRPC's http-grpc-status-mapping", () => {
    expect([400, 401, 403, 404, 429, 502, 503, 504, 500, 418].map(httpToGrpcStatus)).toEqual([
      13, 16, 7, 12, 14, 14, 14, 14, 2, 2,
    ]);
    expect(grpcLocalReplyHeaders(500, Buffer.from('é ok'))['grpc-message']).toBe('%C3%A9 ok');
  });
});
