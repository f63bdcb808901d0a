// HTTP/2 through the proxy, downstream and upstream, with hand-written xDS: an HCM with codec_type AUTO (Envoy's
// default) serves h2c with prior knowledge and HTTP/1.1 on the same port (Envoy's determineNextProtocol: the
// connection preface), h2 over TLS by ALPN (common_tls_context.alpn_protocols ["h2","http/1.1"], as Envoy Gateway
// sets it); a cluster with HttpProtocolOptions.explicit_http_config.http2_protocol_options speaks h2c to its
// endpoints. A @grpc/grpc-js client calls a grpc-js server through it: unary, server/client/bidi streaming, status
// codes and grpc-message preserved (trailers both ways: te: trailers up, grpc-status down). Stats are Envoy's
// (http.<prefix>.downstream_cx_http2_total, downstream_rq_http2_total, cluster.<name>.upstream_cx_http2_total).
// An oversized header block is refused as Envoy's HTTP/2 codec refuses it (codec_impl.cc saveHeader: http2.
// header_overflow, RST_STREAM INTERNAL_ERROR; test/integration/protocol_integration_test.cc "waitForReset" for
// HTTP/2, 431 for HTTP/1) and the connection keeps serving.
import http2 from 'node:http2';
import https from 'node:https';
import type net from 'node:net';
import type tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rsaCert } from '../../../conformance/utils/certificates.ts';
import {
  HCM_TYPE,
  httpRequest,
  ROUTER,
  STDOUT_ACCESS_LOG,
  startXdsFixture,
  staticCluster,
  type XdsFixture,
} from '../testing/harness.ts';
import { closedPort, startTestUpstream, type TestUpstream } from '../testing/upstream.ts';

type J = Record<string, any>;

const TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

// A gRPC service with JSON messages (no .proto needed): what grpc-js calls a service definition.
const json = {
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
};
const SERVICE = {
  unary: { path: '/test.Echo/Unary', requestStream: false, responseStream: false, ...json },
  serverStream: { path: '/test.Echo/ServerStream', requestStream: false, responseStream: true, ...json },
  clientStream: { path: '/test.Echo/ClientStream', requestStream: true, responseStream: false, ...json },
  bidi: { path: '/test.Echo/Bidi', requestStream: true, responseStream: true, ...json },
} as unknown as grpc.ServiceDefinition;

type Msg = { text?: string; n?: number; fail?: number };

function startGrpcServer(): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(SERVICE, {
    unary: (call: grpc.ServerUnaryCall<Msg, Msg>, cb: grpc.sendUnaryData<Msg>) => {
      const r = call.request;
      if (r.fail) return cb({ code: r.fail, details: `failing with ${r.fail}` });
      const md = call.metadata.get('x-client')[0];
      cb(null, { text: `echo ${r.text} via ${call.metadata.get('x-forwarded-proto')[0]} ${md ?? ''}`.trim() });
    },
    serverStream: (call: grpc.ServerWritableStream<Msg, Msg>) => {
      for (let i = 0; i < (call.request.n ?? 0); i++) call.write({ n: i });
      call.end();
    },
    clientStream: (call: grpc.ServerReadableStream<Msg, Msg>, cb: grpc.sendUnaryData<Msg>) => {
      let sum = 0;
      call.on('data', (m: Msg) => (sum += m.n ?? 0));
      call.on('end', () => cb(null, { n: sum }));
    },
    bidi: (call: grpc.ServerDuplexStream<Msg, Msg>) => {
      call.on('data', (m: Msg) => call.write({ n: (m.n ?? 0) * 10 }));
      call.on('end', () => {
        const trailer = new grpc.Metadata();
        call.end(trailer);
      });
    },
  });
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve({ server, port }),
    ),
  );
}

function hcm(prefix: string, cluster: string, extra: J = {}): J {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: prefix,
      http_filters: [ROUTER],
      access_log: [STDOUT_ACCESS_LOG],
      route_config: {
        name: `${prefix}-routes`,
        virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }],
      },
      ...extra,
    },
  };
}

function plainListener(name: string, cluster: string, extra: J = {}): J {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{ filters: [hcm(name, cluster, extra)] }],
  };
}

function tlsListener(name: string, cluster: string, pem: { cert: string; key: string }, alpn: string[]): J {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    listener_filters: [
      {
        name: 'envoy.filters.listener.tls_inspector',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
        },
      },
    ],
    filter_chains: [
      {
        filters: [hcm(name, cluster)],
        transport_socket: {
          name: 'envoy.transport_sockets.tls',
          typed_config: {
            '@type': TLS_CONTEXT,
            common_tls_context: {
              tls_certificates: [
                { certificate_chain: { inline_bytes: b64(pem.cert) }, private_key: { inline_bytes: b64(pem.key) } },
              ],
              alpn_protocols: alpn,
            },
          },
        },
      },
    ],
  };
}

const h2Cluster = (name: string, port: number, options: J = {}) =>
  staticCluster(name, [['127.0.0.1', port]], {
    typed_extension_protocol_options: {
      [HTTP_OPTIONS]: {
        '@type': `type.googleapis.com/${HTTP_OPTIONS}`,
        explicit_http_config: { http2_protocol_options: options },
      },
    },
  });

/** One HTTP/2 request on a session: status, headers, body, trailers, or the RST_STREAM code. */
function h2Request(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body?: string,
): Promise<{ status: number; headers: J; body: string; trailers: J; rstCode?: number }> {
  return new Promise((resolve, reject) => {
    const req = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let h: J = {};
    let trailers: J = {};
    let data = '';
    req.on('response', (r) => {
      status = Number(r[':status']);
      h = { ...r };
    });
    req.on('trailers', (t) => {
      trailers = { ...t };
    });
    req.on('data', (d: Buffer) => (data += d));
    req.on('error', () => {});
    req.on('close', () => {
      if (req.rstCode) resolve({ status, headers: h, body: data, trailers, rstCode: req.rstCode });
      else resolve({ status, headers: h, body: data, trailers });
    });
    req.on('aborted', () => reject(new Error('aborted')));
    if (body !== undefined) req.end(body);
  });
}

function unary(client: grpc.Client, method: string, msg: Msg, md = new grpc.Metadata()): Promise<Msg> {
  return new Promise((resolve, reject) =>
    (client as any)[method](msg, md, (err: grpc.ServiceError | null, res: Msg) => (err ? reject(err) : resolve(res))),
  );
}

describe('HTTP/2 through the proxy', () => {
  let fx: XdsFixture;
  let grpcServer: grpc.Server;
  let upstream: TestUpstream;
  let h2Upstream: http2.Http2Server;
  let client: grpc.Client;
  let grpcPort: number;
  const sessions: http2.ClientHttp2Session[] = [];
  const pem = rsaCert(['h2.example.com'], 'server');
  const connect = (url: string, opts: http2.SecureClientSessionOptions = {}) => {
    const s = http2.connect(url, opts);
    s.on('error', () => {});
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    const g = await startGrpcServer();
    grpcServer = g.server;
    grpcPort = g.port;
    upstream = await startTestUpstream('h1');
    // A plain h2c server with trailers, to see them on an HTTP/1.1 downstream too.
    h2Upstream = http2.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-proto': req.httpVersion });
      res.addTrailers({ 'x-checksum': 'abc' });
      res.end(`h2 upstream saw ${req.headers[':authority']} ${req.headers['x-forwarded-proto']}`);
    });
    await new Promise<void>((r) => h2Upstream.listen(0, '127.0.0.1', r));
    fx = await startXdsFixture();
    const res = await fx.apply({
      clusters: [
        h2Cluster('grpc', g.port, { max_concurrent_streams: 100, initial_stream_window_size: 65536 }),
        h2Cluster('h2plain', (h2Upstream.address() as net.AddressInfo).port),
        staticCluster('h1', [['127.0.0.1', upstream.port]]),
      ],
      listeners: [
        plainListener('h2c', 'grpc', {
          http2_protocol_options: {
            max_concurrent_streams: 100,
            initial_stream_window_size: 65536,
            initial_connection_window_size: 1048576,
          },
        }),
        plainListener('mixed', 'h1', { common_http_protocol_options: { max_headers_count: 20 } }),
        plainListener('trailers', 'h2plain'),
        tlsListener('tls', 'h2plain', pem, ['h2', 'http/1.1']),
        tlsListener('tls-noalpn', 'h2plain', pem, []),
      ],
    });
    expect(res.nacks).toEqual([]);
    client = new (grpc.makeGenericClientConstructor(SERVICE, 'Echo'))(
      `127.0.0.1:${fx.proxy.port('h2c')}`,
      grpc.credentials.createInsecure(),
    );
  });

  afterAll(async () => {
    client?.close();
    for (const s of sessions) s.destroy();
    await fx?.close();
    grpcServer?.forceShutdown();
    await upstream?.close();
    await new Promise((r) => (h2Upstream ? h2Upstream.close(r) : r(undefined)));
  });

  it('a grpc-js client calls a grpc-js server through h2c downstream and HTTP/2 upstream: unary, status codes kept', async () => {
    const md = new grpc.Metadata();
    md.set('x-client', 'c1');
    expect(await unary(client, 'unary', { text: 'hi' }, md)).toEqual({ text: 'echo hi via http c1' });
    const err: grpc.ServiceError = await unary(client, 'unary', { fail: grpc.status.NOT_FOUND }).catch((e) => e);
    expect(err.code).toBe(grpc.status.NOT_FOUND);
    expect(err.details).toBe('failing with 5');
    const err2 = await unary(client, 'unary', { fail: grpc.status.PERMISSION_DENIED }).catch((e) => e);
    expect(err2.code).toBe(grpc.status.PERMISSION_DENIED);
    const stats = (await fx.proxy.admin('/stats')).body;
    expect(stats).toMatch(/^http\.h2c\.downstream_cx_http2_total: [1-9]/m);
    expect(stats).toMatch(/^http\.h2c\.downstream_rq_http2_total: [3-9]/m);
    expect(stats).toMatch(/^http\.h2c\.downstream_cx_http1_total: 0$/m);
    expect(stats).toMatch(/^cluster\.grpc\.upstream_cx_http2_total: 1$/m);
    expect(stats).toMatch(/^cluster\.grpc\.upstream_rq_200: [3-9]/m);
    // HTTP/2 in the access log's %PROTOCOL%.
    expect(fx.proxy.access.some((l) => l.includes('"POST /test.Echo/Unary HTTP/2"'))).toBe(true);
  });

  it("the proxy's own replies to a gRPC request are gRPC statuses, as Envoy sends them (200, grpc-status, grpc-message)", async () => {
    // A connection failure (503 UF → UNAVAILABLE) with Envoy's message; HTTP 200 in the access log.
    const res = await fx.apply({
      clusters: [
        h2Cluster('grpc', (await closedPort()) as number),
        h2Cluster('h2plain', (h2Upstream.address() as net.AddressInfo).port),
        staticCluster('h1', [['127.0.0.1', upstream.port]]),
      ],
    });
    expect(res.nacks).toEqual([]);
    const e2: grpc.ServiceError = await unary(client, 'unary', { text: 'x' }).catch((e) => e);
    expect(e2.code).toBe(grpc.status.UNAVAILABLE);
    expect(e2.details).toMatch(/^upstream connect error or disconnect\/reset before headers\. reset reason: /);
    const last = fx.proxy.access.filter((l) => l.includes('/test.Echo/Unary')).at(-1)!;
    expect(last.split('"')[2]?.trim().split(' ').slice(0, 2)).toEqual(['200', 'UF']);
    await fx.apply({
      clusters: [
        h2Cluster('grpc', grpcPort, { max_concurrent_streams: 100, initial_stream_window_size: 65536 }),
        h2Cluster('h2plain', (h2Upstream.address() as net.AddressInfo).port),
        staticCluster('h1', [['127.0.0.1', upstream.port]]),
      ],
    });
    expect(await unary(client, 'unary', { text: 'back' })).toEqual({ text: 'echo back via http' });
  });

  it('server, client and bidi streaming calls pass through with their messages and grpc-status', async () => {
    const got: Msg[] = [];
    await new Promise<void>((resolve, reject) => {
      const call = (client as any).serverStream({ n: 4 }) as grpc.ClientReadableStream<Msg>;
      call.on('data', (m: Msg) => got.push(m));
      call.on('status', (s: grpc.StatusObject) => (s.code === 0 ? resolve() : reject(new Error(s.details))));
      call.on('error', reject);
    });
    expect(got).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
    const sum = await new Promise<Msg>((resolve, reject) => {
      const call = (client as any).clientStream((err: Error | null, r: Msg) => (err ? reject(err) : resolve(r)));
      for (const n of [1, 2, 3, 4]) call.write({ n });
      call.end();
    });
    expect(sum).toEqual({ n: 10 });
    const echoed: Msg[] = [];
    await new Promise<void>((resolve, reject) => {
      const call = (client as any).bidi() as grpc.ClientDuplexStream<Msg, Msg>;
      call.on('data', (m: Msg) => echoed.push(m));
      call.on('status', (s: grpc.StatusObject) => (s.code === 0 ? resolve() : reject(new Error(s.details))));
      call.on('error', reject);
      for (const n of [1, 2]) call.write({ n });
      call.end();
    });
    expect(echoed).toEqual([{ n: 10 }, { n: 20 }]);
  });

  it('a bidirectional stream whose client waits for each answer before its next message: the body streams upstream', async () => {
    const call = (client as any).bidi() as grpc.ClientDuplexStream<Msg, Msg>;
    const done = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => {});
    const answers: Msg[] = [];
    for (const n of [1, 2, 3]) {
      call.write({ n });
      answers.push(await new Promise<Msg>((resolve) => call.once('data', resolve)));
    }
    call.end();
    expect(answers).toEqual([{ n: 10 }, { n: 20 }, { n: 30 }]);
    expect((await done).code).toBe(grpc.status.OK);
  });

  it('HTTP/1.1 keeps working on the h2c port (codec AUTO), and trailers from an HTTP/2 upstream reach both', async () => {
    const port = fx.proxy.port('trailers');
    const r1 = await httpRequest(`http://127.0.0.1:${port}/x`);
    expect(r1.status).toBe(200);
    expect(r1.body).toBe(`h2 upstream saw 127.0.0.1:${port} http`);
    expect(r1.headers['x-proto']).toBe('2.0');
    const s = connect(`http://127.0.0.1:${port}`);
    const r2 = await h2Request(s, { ':path': '/y', te: 'trailers' });
    expect(r2.status).toBe(200);
    expect(r2.trailers['x-checksum']).toBe('abc');
    const stats = (await fx.proxy.admin('/stats')).body;
    expect(stats).toMatch(/^http\.trailers\.downstream_rq_http1_total: 1$/m);
    expect(stats).toMatch(/^http\.trailers\.downstream_rq_http2_total: 1$/m);
    expect(stats).toMatch(/^http\.trailers\.downstream_cx_http2_total: 1$/m);
    expect(stats).toMatch(/^cluster\.h2plain\.upstream_cx_http2_total: 1$/m);
  });

  it('h2 over TLS by ALPN (h2, http/1.1): :authority is the Host, x-forwarded-proto https; http/1.1 by ALPN too', async () => {
    const port = fx.proxy.port('tls');
    const s = connect(`https://127.0.0.1:${port}`, { servername: 'h2.example.com', ca: pem.cert });
    const r = await h2Request(s, { ':path': '/', ':authority': 'h2.example.com' });
    expect((s.socket as unknown as { alpnProtocol: string }).alpnProtocol).toBe('h2');
    expect(r.status).toBe(200);
    expect(r.body).toBe('h2 upstream saw h2.example.com https');
    const stats = (await fx.proxy.admin('/stats')).body;
    expect(stats).toMatch(/^http\.tls\.downstream_cx_http2_total: 1$/m);
    expect(stats).toMatch(/^listener\.127\.0\.0\.1_\d+\.ssl\.handshake: [1-9]/m);
  });

  it('a chain without alpn_protocols negotiates no ALPN: a client offering h2 and http/1.1 is served HTTP/1.1', async () => {
    const port = fx.proxy.port('tls-noalpn');
    const r = await new Promise<{ status: number; alpn: unknown; body: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/',
          servername: 'h2.example.com',
          ca: pem.cert,
          headers: { host: 'h2.example.com' },
          ALPNProtocols: ['h2', 'http/1.1'],
          agent: false,
        } as https.RequestOptions,
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, alpn: (res.socket as tls.TLSSocket).alpnProtocol, body }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(r).toEqual({ status: 200, alpn: false, body: 'h2 upstream saw h2.example.com https' });
  });

  it('an h2 request over max_headers_count is reset (INTERNAL_ERROR, http2.header_overflow); the session keeps serving', async () => {
    const port = fx.proxy.port('mixed');
    const s = connect(`http://127.0.0.1:${port}`);
    const many: http2.OutgoingHttpHeaders = { ':path': '/many' };
    for (let i = 0; i < 30; i++) many[`x-h${i}`] = 'v';
    const r = await h2Request(s, many);
    expect(r.rstCode).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR);
    expect(r.status).toBe(0);
    const ok = await h2Request(s, { ':path': '/fine' });
    expect(ok.status).toBe(200);
    expect(upstream.received.map((x) => x.url)).toContain('/fine');
    expect(upstream.received.map((x) => x.url)).not.toContain('/many');
    const big = await h2Request(s, { ':path': '/big', 'x-big': 'a'.repeat(61 * 1024) });
    expect(big.rstCode).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR);
    expect((await h2Request(s, { ':path': '/fine2' })).status).toBe(200);
    const stats = (await fx.proxy.admin('/stats')).body;
    expect(stats).toMatch(/^http2\.header_overflow: 2$/m);
  });

  it('NACKs HTTP/2 protocol options it cannot honour, naming the field; the last good config keeps serving', async () => {
    const bad = await fx.apply({
      clusters: [
        h2Cluster('grpc', 1, { allow_connect: true }),
        staticCluster('h1', [['127.0.0.1', upstream.port]]),
        h2Cluster('h2plain', (h2Upstream.address() as net.AddressInfo).port),
      ],
    });
    expect(bad.nacks.map((n) => n.error_detail?.message)).toEqual([
      expect.stringContaining('cluster grpc: http2_protocol_options.allow_connect is not supported'),
    ]);
    const badRange = await fx.apply({
      listeners: [plainListener('h2c', 'grpc', { http2_protocol_options: { initial_stream_window_size: 100 } })],
    });
    expect(badRange.nacks.map((n) => n.error_detail?.message)).toEqual([
      expect.stringContaining('Proto constraint validation failed'),
    ]);
    expect(await unary(client, 'unary', { text: 'still' })).toEqual({ text: 'echo still via http' });
    // Last: an LDS update naming only this listener removes the others (state of the world), as in Envoy.
    const mixed = tlsListener('tls', 'h2plain', pem, ['h2', 'http/1.1']);
    const second = structuredClone(mixed.filter_chains[0]);
    second.filter_chain_match = { server_names: ['other.example.com'] };
    second.transport_socket.typed_config.common_tls_context.alpn_protocols = ['http/1.1'];
    mixed.filter_chains.push(second);
    const badAlpn = await fx.apply({ listeners: [mixed] });
    expect(badAlpn.nacks.map((n) => n.error_detail?.message)).toEqual([
      expect.stringContaining('TLS filter chains with different alpn_protocols are not supported'),
    ]);
  });
});
