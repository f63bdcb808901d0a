// Request-targets other than origin-form, sent on a raw socket as a client configured with the proxy as its HTTP
// proxy sends them (RFC 9112 §3.2.2, `GET http://host/path HTTP/1.1`), and what Envoy answers
// (ServerConnectionImpl::handlePath in source/common/http/http1/codec_impl.cc; the HCM's checks in
// ConnectionManagerImpl::ActiveStream::decodeHeaders): routed by the URI's authority, which replaces the Host header,
// with the URI's path; :scheme from the URI (x-forwarded-proto still from the connection); https in the clear refused
// at the edge; asterisk-form and, with allow_absolute_url false, absolute-form answered 404; CONNECT 403 (no upgrade
// configured); an unusable URI 400.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cla,
  edsCluster,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';
import { startTestUpstream, type TestUpstream } from '../testing/upstream.ts';

type J = Record<string, any>;

const LISTENER = 'listener~8080';
let up1: TestUpstream;
let up2: TestUpstream;
let fx: XdsFixture;
let port: number;

/** www.example.com → up1 (https requests, by a :scheme matcher, → up2; /redirect redirects), other.example.org → up2. */
async function configure(hcm: J = {}) {
  const res = await fx.apply({
    clusters: [edsCluster('up1'), edsCluster('up2')],
    endpoints: [cla('up1', [['127.0.0.1', up1.port]]), cla('up2', [['127.0.0.1', up2.port]])],
    listeners: [listener(LISTENER, 0, { rds: LISTENER, hcm })],
    routes: [
      routeConfig(LISTENER, [
        vhost(
          'www',
          ['www.example.com'],
          [
            { match: { prefix: '/redirect' }, redirect: { path_redirect: '/moved' } },
            route('/', 'up2', {
              match: { prefix: '/', headers: [{ name: ':scheme', string_match: { exact: 'https' } }] },
            }),
            route('/', 'up1'),
          ],
        ),
        vhost('other', ['other.example.org'], [route('/', 'up2')]),
      ]),
    ],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  port = fx.proxy.port(LISTENER);
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The proxy closed the connection after the response. */
  closed: boolean;
}

/** Writes `head` (request line and headers, CRLF-separated, no final blank line) and reads one response. */
function raw(head: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    let parsed: Omit<RawResponse, 'closed'> | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response to ${JSON.stringify(head)}; got ${JSON.stringify(data)}`));
    }, 10_000);
    const tryParse = () => {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0 || parsed) return;
      const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      const body = data.slice(end + 4);
      if (body.length < length) return;
      parsed = { status: Number(statusLine!.split(' ')[1]), headers, body: body.slice(0, length) };
      // A connection the proxy keeps is closed by us after a moment; one it closes ends first.
      setTimeout(() => socket.end(), 200);
    };
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      data += c;
      tryParse();
    });
    let closedByPeer = false;
    socket.on('end', () => {
      closedByPeer = !socket.writableEnded;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      tryParse();
      if (parsed) resolve({ ...parsed, closed: closedByPeer });
      else
        reject(
          new Error(`connection closed without a response to ${JSON.stringify(head)}; got ${JSON.stringify(data)}`),
        );
    });
    socket.on('error', () => undefined);
    socket.write(`${head}\r\n\r\n`);
  });
}

const echo = (r: RawResponse) => JSON.parse(r.body) as { name: string; url: string; headers: Record<string, string> };
const stat = (name: string) => fx.proxy.server.stats.value(name) ?? 0;
const lastAccess = () => fx.proxy.access.at(-1) ?? '';

beforeAll(async () => {
  [up1, up2] = await Promise.all([startTestUpstream('up1'), startTestUpstream('up2')]);
  fx = await startXdsFixture();
  await configure();
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([up1?.close(), up2?.close()]);
});

describe('absolute-form (allow_absolute_url, on by default)', () => {
  it('routes by the URI authority, which replaces a disagreeing Host; the path is the URI path and query', async () => {
    await configure();
    const r = await raw('GET http://www.example.com/echo?x=1 HTTP/1.1\r\nHost: other.example.org');
    expect(r.status).toBe(200);
    const seen = echo(r);
    expect(seen.name).toBe('up1');
    expect(seen.url).toBe('/echo?x=1');
    expect(seen.headers.host).toBe('www.example.com');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(r.closed).toBe(false);
    expect(lastAccess()).toMatch(/"GET \/echo\?x=1 HTTP\/1\.1" 200 - .* "www\.example\.com" "127\.0\.0\.1:\d+"\n$/);
  });

  it('takes host:port from the URI, with or without a Host header', async () => {
    await configure({ strip_any_host_port: true });
    const withPort = await raw('GET http://www.example.com:8080/a HTTP/1.1\r\nHost: www.example.com');
    expect(echo(withPort).headers.host).toBe('www.example.com');
    expect(echo(withPort).name).toBe('up1');
    const noHost = await raw('GET http://www.example.com/b HTTP/1.1\r\nUser-Agent: t');
    expect(noHost.status).toBe(200);
    expect(echo(noHost).url).toBe('/b');
    const bare = await raw('GET http://www.example.com HTTP/1.1\r\nUser-Agent: t');
    expect(echo(bare).url).toBe('/');
  });

  it("an https URI sets :scheme (routes and redirects see it); x-forwarded-proto stays the connection's", async () => {
    await configure();
    const r = await raw('GET https://www.example.com/s HTTP/1.1\r\nHost: www.example.com');
    expect(r.status).toBe(200);
    expect(echo(r).name).toBe('up2');
    expect(echo(r).headers['x-forwarded-proto']).toBe('http');
    const plain = await raw('GET /s HTTP/1.1\r\nHost: www.example.com');
    expect(echo(plain).name).toBe('up1');
    const moved = await raw('GET https://www.example.com/redirect HTTP/1.1\r\nHost: www.example.com');
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe('https://www.example.com/moved');
    const movedPlain = await raw('GET /redirect HTTP/1.1\r\nHost: www.example.com');
    expect(movedPlain.headers.location).toBe('http://www.example.com/moved');
  });

  it('an edge proxy (use_remote_address) refuses https in the clear: 403, connection closed', async () => {
    await configure({ use_remote_address: true });
    const before = stat('http.http.downstream_cx_protocol_error');
    const r = await raw('GET https://www.example.com/s HTTP/1.1\r\nHost: www.example.com');
    expect(r.status).toBe(403);
    expect(r.body).toBe('Forbidden');
    expect(r.headers.server).toBe('envoy');
    expect(r.closed).toBe(true);
    // The codec refused the request: the connection manager never saw its headers.
    expect(lastAccess()).toMatch(/"- - HTTP\/1\.1" 403 DPE .* "-" "-"\n$/);
    expect(stat('http.http.downstream_cx_protocol_error')).toBe(before + 1);
    expect((await raw('GET http://www.example.com/s HTTP/1.1\r\nHost: www.example.com')).status).toBe(200);
  });

  it('a URI that is not http(s) or does not parse: 400 Bad Request, connection closed', async () => {
    await configure();
    for (const target of ['ftp://www.example.com/a', 'http://host:99999/a', 'http://[::zz]/a']) {
      const r = await raw(`GET ${target} HTTP/1.1\r\nHost: www.example.com`);
      expect(r.status, target).toBe(400);
      expect(r.body, target).toBe('Bad Request');
      expect(r.closed, target).toBe(true);
      expect(lastAccess(), target).toMatch(/"- - HTTP\/1\.1" 400 DPE /);
    }
  });

  it('with allow_absolute_url false the URI is the :path: 404, counted as a non-relative path', async () => {
    await configure({ http_protocol_options: { allow_absolute_url: false } });
    const before = stat('http.http.downstream_rq_non_relative_path');
    const r = await raw('GET http://www.example.com/echo HTTP/1.1\r\nHost: www.example.com');
    expect(r.status).toBe(404);
    expect(r.body).toBe('');
    expect(stat('http.http.downstream_rq_non_relative_path')).toBe(before + 1);
    expect(lastAccess()).toMatch(/"GET http:\/\/www\.example\.com\/echo HTTP\/1\.1" 404 - /);
  });
});

describe('asterisk-form, CONNECT and a missing Host', () => {
  it('OPTIONS * is answered 404 by the connection manager, without a route lookup', async () => {
    await configure();
    const before = stat('http.http.downstream_rq_non_relative_path');
    const r = await raw('OPTIONS * HTTP/1.1\r\nHost: www.example.com');
    expect(r.status).toBe(404);
    expect(r.closed).toBe(false);
    expect(stat('http.http.downstream_rq_non_relative_path')).toBe(before + 1);
    expect(lastAccess()).toMatch(/"OPTIONS \* HTTP\/1\.1" 404 - /);
  });

  it('CONNECT without an upgrade config: 403, counted as an upgrade on a route without it', async () => {
    await configure();
    const before = stat('http.http.downstream_rq_ws_on_non_ws_route');
    const r = await raw('CONNECT www.example.com:443 HTTP/1.1\r\nHost: www.example.com:443');
    expect(r.status).toBe(403);
    expect(r.headers.server).toBe('envoy');
    expect(r.closed).toBe(true);
    expect(stat('http.http.downstream_rq_ws_on_non_ws_route')).toBe(before + 1);
    expect(up1.received.concat(up2.received).some((x) => x.method === 'CONNECT')).toBe(false);
  });

  it('an HTTP/1.1 origin-form request without Host: 400 from the connection manager', async () => {
    await configure();
    const r = await raw('GET /echo HTTP/1.1\r\nUser-Agent: t');
    expect(r.status).toBe(400);
    expect(r.headers.server).toBe('envoy');
    expect(r.closed).toBe(true);
    expect(lastAccess()).toMatch(/"GET \/echo HTTP\/1\.1" 400 - /);
  });
});
