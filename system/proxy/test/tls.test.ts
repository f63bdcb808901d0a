// TLS termination on a listener (Envoy's DownstreamTlsContext on filter chains, tls_inspector): the chain a connection
// takes by SNI as Envoy's filter chain matching picks it (exact name, then the longest wildcard suffix, then the chain
// without server_names; no match: the connection closed; docs: intro/arch_overview/listeners/listener_filters and
// envoy/config/listener/v3/listener_components.proto FilterChainMatch.server_names), ALPN http/1.1, the HCM behind
// it as in the clear; certificates Envoy cannot load NACKed with its words (source/common/tls/context_impl.cc) while
// the last good listener keeps serving; config_dump shows private keys as Envoy does ("[redacted]").
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { selfSigned } from '../../shared/testing/certs.ts';
import { HCM_TYPE, ROUTER, startXdsFixture, type XdsFixture } from '../testing/harness.ts';

type J = Record<string, any>;

const TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function chain(name: string, serverNames: string[], pem: { cert: string; key: string }): J {
  return {
    name,
    ...(serverNames.length ? { filter_chain_match: { server_names: serverNames } } : {}),
    filters: [
      {
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': HCM_TYPE,
          stat_prefix: 'https',
          http_filters: [ROUTER],
          route_config: {
            name: 'local',
            virtual_hosts: [
              {
                name: 'all',
                domains: ['*'],
                routes: [
                  { match: { prefix: '/redirect' }, redirect: { path_redirect: '/elsewhere' } },
                  { match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } },
                ],
              },
            ],
          },
        },
      },
    ],
    transport_socket: {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': TLS_CONTEXT,
        common_tls_context: {
          tls_certificates: [
            { certificate_chain: { inline_bytes: b64(pem.cert) }, private_key: { inline_bytes: b64(pem.key) } },
          ],
          alpn_protocols: ['http/1.1'],
        },
      },
    },
  };
}

function tlsListener(name: string, chains: J[]): J {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
    filter_chains: chains,
  };
}

/** One HTTPS request with that SNI (none: undefined), trusting anything: the CN served, ALPN, status and body. */
function get(
  port: number,
  servername: string | undefined,
  path = '/',
): Promise<{ cn: string; alpn: string; status: number; body: string; location?: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        agent: false,
        ...(servername ? { servername } : {}),
        ALPNProtocols: ['h2', 'http/1.1'],
        headers: { host: servername ?? 'example.com' },
      } as https.RequestOptions,
      (res) => {
        const sock = res.socket as tls.TLSSocket;
        const cn = String(sock.getPeerCertificate().subject?.CN ?? '');
        const alpn = String(sock.alpnProtocol);
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        const location = res.headers.location;
        res.on('end', () =>
          resolve({ cn, alpn, status: res.statusCode ?? 0, body, ...(location ? { location } : {}) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A TLS handshake with that SNI: 'ok', or the error code the client saw (the proxy closed the connection). */
function handshake(port: number, servername: string | undefined): Promise<string> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, servername: servername ?? '', rejectUnauthorized: false });
    // A request, so the server has seen the handshake through (TLS 1.3: the client's Finished) before the close.
    s.once('secureConnect', () => {
      s.end('GET / HTTP/1.1\r\nhost: a.example.com\r\nconnection: close\r\n\r\n');
      s.once('data', () => resolve('ok'));
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    s.once('close', () => resolve('closed'));
  });
}

const certs = {
  exact: selfSigned('a.example.com'),
  wildcard: selfSigned('wildcard.example.com'),
  deeper: selfSigned('wildcard.b.example.com'),
  fallback: selfSigned('default'),
};
let fx: XdsFixture;
const goodListeners = () => [
  tlsListener('https', [
    chain('exact', ['a.example.com'], certs.exact),
    chain('wildcard', ['*.example.com'], certs.wildcard),
    chain('deeper', ['*.b.example.com'], certs.deeper),
    chain('default', [], certs.fallback),
  ]),
  tlsListener('strict', [chain('only-a', ['a.example.com'], certs.exact)]),
];

beforeAll(async () => {
  fx = await startXdsFixture();
  const res = await fx.apply({ listeners: goodListeners(), clusters: [] });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
});

describe('TLS termination', () => {
  it('picks the filter chain by SNI: exact, then the longest wildcard, then the chain without server_names', async () => {
    const port = fx.proxy.port('https');
    const cn = async (sni: string | undefined) => (await get(port, sni)).cn;
    expect(await cn('a.example.com')).toBe('a.example.com');
    expect(await cn('A.Example.com')).toBe('a.example.com');
    expect(await cn('x.example.com')).toBe('wildcard.example.com');
    expect(await cn('x.b.example.com')).toBe('wildcard.b.example.com');
    expect(await cn('y.x.example.com')).toBe('wildcard.example.com');
    expect(await cn('example.org')).toBe('default');
    expect(await cn(undefined)).toBe('default');
  });

  it('serves HTTP/1.1 behind TLS through the connection manager (ALPN http/1.1 when h2 is offered too)', async () => {
    const r = await get(fx.proxy.port('https'), 'a.example.com');
    expect(r).toEqual({ cn: 'a.example.com', alpn: 'http/1.1', status: 200, body: 'ok' });
  });

  it('gives requests over TLS the https :scheme (a redirect keeps it, as Envoy takes the original URL scheme)', async () => {
    const r = await get(fx.proxy.port('https'), 'a.example.com', '/redirect');
    expect([r.status, r.location]).toEqual([301, 'https://a.example.com/elsewhere']);
  });

  it('closes a connection no filter chain matches (no default chain): wrong SNI, no SNI', async () => {
    const port = fx.proxy.port('strict');
    expect(await handshake(port, 'a.example.com')).toBe('ok');
    expect(await handshake(port, 'b.example.com')).not.toBe('ok');
    expect(await handshake(port, undefined)).not.toBe('ok');
  });

  it('shows the private key as [redacted] in config_dump, the certificate as sent', async () => {
    const dump = JSON.parse((await fx.proxy.admin('/config_dump?resource=dynamic_listeners')).body);
    const l = dump.configs.find((c: J) => c.name === 'strict').active_state.listener;
    const ctx = l.filter_chains[0].transport_socket.typed_config.common_tls_context;
    expect(ctx.tls_certificates[0]).toEqual({
      certificate_chain: { inline_bytes: b64(certs.exact.cert) },
      private_key: { inline_bytes: b64('[redacted]') },
    });
    expect(JSON.stringify(dump)).not.toContain(b64(certs.exact.key));
  });

  it("counts Envoy's listener ssl.* stats: handshake, connection_error, no_certificate, versions", async () => {
    const port = fx.proxy.port('strict');
    const stat = async (name: string) => {
      const body = (
        await fx.proxy.admin(
          `/stats?filter=${encodeURIComponent(`^listener\\.127\\.0\\.0\\.1_${port}\\.ssl\\.${name}$`)}`,
        )
      ).body;
      return Number(/: (\d+)/.exec(body)?.[1] ?? Number.NaN);
    };
    const before = {
      ok: await stat('handshake'),
      bad: await stat('connection_error'),
      v13: await stat('versions\\.TLSv1\\.3'),
    };
    expect(await handshake(port, 'a.example.com')).toBe('ok');
    expect(await handshake(port, 'b.example.com')).not.toBe('ok');
    await vi.waitFor(async () => expect(await stat('handshake')).toBe(before.ok + 1));
    expect(await stat('no_certificate')).toBeGreaterThanOrEqual(before.ok + 1);
    expect(await stat('versions\\.TLSv1\\.3')).toBe(before.v13 + 1);
    await vi.waitFor(async () => expect(await stat('connection_error')).toBe(before.bad + 1));
  });

  it("a plaintext HTTP/1.1 client on an HTTPS port: connection_error counted, Envoy's [connection] line, closed; others served", async () => {
    const port = fx.proxy.port('https');
    const errors = async () =>
      Number(
        /: (\d+)/.exec(
          (
            await fx.proxy.admin(
              `/stats?filter=${encodeURIComponent(`^listener\\.127\\.0\\.0\\.1_${port}\\.ssl\\.connection_error$`)}`,
            )
          ).body,
        )?.[1] ?? Number.NaN,
      );
    // The contract's procedure: the connection logger to debug at run time (/logging).
    expect((await fx.proxy.admin('/logging?connection=debug', 'POST')).status).toBe(200);
    const before = await errors();
    const got = await new Promise<string>((resolve) => {
      const c = net.connect({ host: '127.0.0.1', port });
      let text = '';
      c.on('data', (d) => {
        text += d.toString('latin1');
      });
      c.on('connect', () => c.write('GET / HTTP/1.1\r\nhost: a.example.com\r\n\r\n'));
      c.on('close', () => resolve(text));
      c.on('error', () => {});
    });
    expect(got).not.toContain('HTTP/1.1 200');
    await vi.waitFor(async () => expect(await errors()).toBe(before + 1));
    expect(
      fx.proxy.logs.some((l) => /\[connection\].*remote address:127\.0\.0\.1:\d+,TLS_error:\|.*:TLS_error_end/.test(l)),
    ).toBe(true);
    expect((await get(port, 'a.example.com')).status).toBe(200);
    expect(fx.proxy.logs.some((l) => /\[connection\].*\[Tags: "ConnectionId":"\d+"\] handshake complete/.test(l))).toBe(
      true,
    );
    await fx.proxy.admin('/logging?connection=info', 'POST');
  });

  it('honours tls_params: a listener capped at TLS 1.2 negotiates TLS 1.2', async () => {
    const c = chain('tls12', [], certs.fallback);
    c.transport_socket.typed_config.common_tls_context.tls_params = { tls_maximum_protocol_version: 'TLSv1_2' };
    const res = await fx.apply({ listeners: [...goodListeners(), tlsListener('tls12', [c])] });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
    const port = fx.proxy.port('tls12');
    const version = await new Promise<string | null>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(s.getProtocol());
        s.destroy();
      });
      s.on('error', reject);
    });
    expect(version).toBe('TLSv1.2');
    expect((await fx.apply({ listeners: goodListeners() })).nacks).toEqual([]);
  });

  it('lists the served certificates in /certs as Envoy does (path <inline>, serial, SANs, expiry)', async () => {
    const { certificates } = JSON.parse((await fx.proxy.admin('/certs')).body);
    expect(certificates).toHaveLength(5);
    expect(certificates).toContainEqual({
      ca_cert: [],
      cert_chain: [
        {
          path: '<inline>',
          serial_number: '01',
          subject_alt_names: [{ dns: 'wildcard.b.example.com' }],
          days_until_expiration: '0',
          valid_from: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
          expiration_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        },
      ],
    });
  });

  it('NACKs a key that does not match its certificate, and a certificate that is not PEM; the last good config serves', async () => {
    const mismatched = { cert: certs.exact.cert, key: certs.fallback.key };
    let res = await fx.apply({ listeners: [tlsListener('https', [chain('bad', [], mismatched)]), goodListeners()[1]] });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      expect.stringMatching(
        /^Error adding\/updating listener\(s\) https: Failed to load private key from <inline>, Cause: .*key values mismatch/,
      ),
    ]);
    res = await fx.apply({
      listeners: [
        tlsListener('https', [chain('bad', [], { cert: 'Hello world', key: certs.fallback.key })]),
        goodListeners()[1],
      ],
    });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      'Error adding/updating listener(s) https: Failed to load certificate chain from <inline>',
    ]);
    const withContext = (extra: J, common: J = {}) => {
      const c = chain('odd', [], certs.fallback);
      Object.assign(c.transport_socket.typed_config, extra);
      Object.assign(c.transport_socket.typed_config.common_tls_context, common);
      return [tlsListener('https', [c]), goodListeners()[1]];
    };
    res = await fx.apply({ listeners: withContext({ require_sni: true }) });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      'Error adding/updating listener(s) https: listener https: filter_chains[0]: DownstreamTlsContext.require_sni is not supported',
    ]);
    res = await fx.apply({ listeners: withContext({}, { alpn_protocols: ['h3', 'http/1.1'] }) });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      expect.stringContaining('alpn_protocols h3, http/1.1: only h2 and http/1.1 are supported'),
    ]);
    expect((await get(fx.proxy.port('https'), 'x.example.com')).cn).toBe('wildcard.example.com');
    const dump = JSON.parse((await fx.proxy.admin('/config_dump?resource=dynamic_listeners')).body);
    const https_ = dump.configs.find((c: J) => c.name === 'https');
    expect(https_.client_status).toBe('NACKED');
    expect(JSON.stringify(https_)).not.toContain(b64(certs.fallback.key));
  });
});

/** A port free now (bound to 0, then closed). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** One plaintext request: its status, or the error code. */
function plainGet(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/', agent: false, headers: { host: 'a.example.com' } });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

describe('a listener switching between HTTP and HTTPS in place (a Gateway listener changing protocol)', () => {
  it('serves TLS on the same address after the update, and plaintext again after the next', async () => {
    const port = await freePort();
    const plainChain = chain('plain', [], certs.fallback);
    delete plainChain.transport_socket;
    const at = (l: J) => ({ ...l, address: { socket_address: { address: '127.0.0.1', port_value: port } } });
    const listeners = (flip: J) => [...goodListeners(), at(flip)];
    let res = await fx.apply({ listeners: listeners(tlsListener('flip', [plainChain])) });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
    await vi.waitFor(async () => expect(await plainGet(port)).toBe(200));
    res = await fx.apply({ listeners: listeners(tlsListener('flip', [chain('tls', [], certs.exact)])) });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
    await vi.waitFor(async () => expect((await get(port, 'a.example.com')).status).toBe(200));
    expect(await plainGet(port)).not.toBe(200);
    res = await fx.apply({ listeners: listeners(tlsListener('flip', [plainChain])) });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
    await vi.waitFor(async () => expect(await plainGet(port)).toBe(200));
  });
});
