// TLS listeners routed by SNI to tcp_proxy (what TLSRoutes become): Envoy's tls_inspector reads the ClientHello
// without terminating TLS (source/extensions/filters/listener/tls_inspector/tls_inspector.cc: stats tls_inspector.*,
// "[filter] tls:onServerName(), requestedServerName: <name>"), filter chains matched by server_names as Envoy's
// FilterChainMatch (exact, longest wildcard, the chain without server_names; none: closed, listener stat
// no_filter_chain_match, "[conn_handler] closing connection from <addr>: no matching filter chain found"); passthrough
// hands the raw bytes to tcp_proxy (the client sees the backend's certificate), Terminate runs the chain's
// DownstreamTlsContext first (ssl.* stats, "[connection] handshake complete" / "remote address:...,TLS_error:..." as
// source/common/tls/ssl_socket.cc logs them). Bad input: a plaintext HTTP/1.1 client on a TLS port is a failed
// handshake (ssl.connection_error) and a closed connection, the proxy serves the next client; certificates Envoy
// cannot load (garbage PEM, a key that does not match) are NACKed with context_impl.cc's words and the last good
// listener keeps serving; an expired certificate or one whose issuer the client does not have loads (Envoy does not
// check its own certificate's dates or chain: the client's verification fails, as with Envoy).
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Issued, type Pem, selfSigned } from '../../shared/testing/certs.ts';
import { startXdsFixture, staticCluster, type XdsFixture } from '../testing/harness.ts';

type J = Record<string, any>;

const TCP_PROXY = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function tcpChain(name: string, serverNames: string[], cluster: string, terminate?: Pem): J {
  return {
    name,
    ...(serverNames.length ? { filter_chain_match: { server_names: serverNames } } : {}),
    filters: [
      { name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY, stat_prefix: name, cluster } },
    ],
    ...(terminate
      ? {
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': TLS_CONTEXT,
              common_tls_context: {
                tls_certificates: [
                  {
                    certificate_chain: { inline_bytes: b64(terminate.cert) },
                    private_key: { inline_bytes: b64(terminate.key) },
                  },
                ],
              },
            },
          },
        }
      : {}),
  };
}

function sniListener(name: string, chains: J[]): J {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
    filter_chains: chains,
  };
}

/** A TLS backend: on each connection, `<name> sni=<SNI it saw>` then the client's bytes upper-cased. */
function tlsBackend(name: string, pem: Pem): Promise<tls.Server> {
  const s = tls.createServer({ cert: pem.cert, key: pem.key }, (c) => {
    c.write(`${name} sni=${(c as tls.TLSSocket & { servername?: string }).servername || '-'}\n`);
    c.on('data', (d) => c.write(d.toString().toUpperCase()));
    c.on('error', () => {});
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

/** A plaintext backend (behind a terminating chain): `plain` then the bytes upper-cased. */
function plainBackend(): Promise<net.Server> {
  const s = net.createServer((c) => {
    c.write('plain\n');
    c.on('data', (d) => c.write(d.toString().toUpperCase()));
    c.on('error', () => {});
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

/**
 * A TLS client with that SNI: the certificate CN it was served and the first line the backend sent, or the error it
 * got (the proxy closed the connection). `ca`: verify against it (else trust anything).
 */
function dial(
  port: number,
  servername: string | undefined,
  ca?: string,
): Promise<{ cn: string; line: string } | { error: string }> {
  return new Promise((resolve) => {
    const s = tls.connect({
      host: '127.0.0.1',
      port,
      servername: servername ?? '',
      ...(ca ? { ca, rejectUnauthorized: true, checkServerIdentity: () => undefined } : { rejectUnauthorized: false }),
    });
    s.once('secureConnect', () => {
      const cn = String(s.getPeerCertificate().subject?.CN ?? '');
      s.once('data', (d) => {
        resolve({ cn, line: d.toString().split('\n')[0] });
        s.destroy();
      });
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    s.once('close', () => resolve({ error: 'closed' }));
  });
}

/** A plaintext HTTP/1.1 request on a TLS port: what came back before the close. */
function plaintextHttp(port: number): Promise<string> {
  return new Promise((resolve) => {
    const c = net.connect({ host: '127.0.0.1', port });
    let got = '';
    c.on('data', (d) => {
      got += d.toString('latin1');
    });
    c.on('connect', () => c.write('GET / HTTP/1.1\r\nhost: t.example.com\r\n\r\n'));
    c.on('close', () => resolve(got));
    c.on('error', () => {});
  });
}

const certs = {
  a: selfSigned('a.example.com'),
  b: selfSigned('backend-b'),
  t: selfSigned('t.example.com'),
  fallback: selfSigned('fallback'),
};
let fx: XdsFixture;
const servers: net.Server[] = [];
let clusters: J[] = [];
const good = () => [
  sniListener('passthrough', [
    tcpChain('to-a', ['a.example.com'], 'a'),
    tcpChain('to-b', ['*.b.example.com', 'b.example.com'], 'b'),
  ]),
  sniListener('passthrough-default', [tcpChain('to-a', ['a.example.com'], 'a'), tcpChain('rest', [], 'b')]),
  sniListener('terminate', [
    tcpChain('t', ['t.example.com'], 'plain', certs.t),
    tcpChain('fallback', [], 'plain', certs.fallback),
  ]),
];
const stat = async (name: string) => {
  const text = (await fx.proxy.admin(`/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`)).body;
  return Number(/: (\d+)/.exec(text)?.[1] ?? 'NaN');
};
const listenerPrefix = (name: string) => `listener.127.0.0.1_${fx.proxy.port(name)}`;

beforeAll(async () => {
  const [a, b, plain] = await Promise.all([
    tlsBackend('backend-a', certs.a),
    tlsBackend('backend-b', certs.b),
    plainBackend(),
  ]);
  servers.push(a, b, plain);
  clusters = [
    staticCluster('a', [['127.0.0.1', portOf(a)]]),
    staticCluster('b', [['127.0.0.1', portOf(b)]]),
    staticCluster('plain', [['127.0.0.1', portOf(plain)]]),
  ];
  fx = await startXdsFixture({ level: 'debug' });
  const res = await fx.apply({ listeners: good(), clusters });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  for (const s of servers) s.close();
});

describe('TLS passthrough by SNI (tls_inspector, filter chains of tcp_proxy)', () => {
  it('routes by SNI without terminating: the client sees the backend certificate and the backend the SNI', async () => {
    const port = fx.proxy.port('passthrough');
    expect(await dial(port, 'a.example.com')).toEqual({ cn: 'a.example.com', line: 'backend-a sni=a.example.com' });
    expect(await dial(port, 'x.b.example.com')).toEqual({ cn: 'backend-b', line: 'backend-b sni=x.b.example.com' });
    expect(await dial(port, 'b.example.com')).toEqual({ cn: 'backend-b', line: 'backend-b sni=b.example.com' });
  });

  it('closes a connection no chain matches (other SNI, no SNI), counted in no_filter_chain_match', async () => {
    const port = fx.proxy.port('passthrough');
    const before = await stat(`${listenerPrefix('passthrough')}.no_filter_chain_match`);
    expect(await dial(port, 'other.example.org')).toHaveProperty('error');
    expect(await dial(port, undefined)).toHaveProperty('error');
    expect(await stat(`${listenerPrefix('passthrough')}.no_filter_chain_match`)).toBe(before + 2);
    expect(
      fx.proxy.logs.some((l) =>
        /\[conn_handler\].*closing connection from 127\.0\.0\.1:\d+: no matching filter chain found/.test(l),
      ),
    ).toBe(true);
  });

  it('a ClientHello without SNI takes the chain without server_names when there is one', async () => {
    expect(await dial(fx.proxy.port('passthrough-default'), undefined)).toEqual({
      cn: 'backend-b',
      line: 'backend-b sni=-',
    });
    expect(await dial(fx.proxy.port('passthrough-default'), 'a.example.com')).toMatchObject({ cn: 'a.example.com' });
  });

  it("counts Envoy's tls_inspector stats and logs the SNI it read", async () => {
    expect(await stat('tls_inspector.tls_found')).toBeGreaterThanOrEqual(5);
    expect(await stat('tls_inspector.sni_found')).toBeGreaterThanOrEqual(4);
    expect(await stat('tls_inspector.sni_not_found')).toBeGreaterThanOrEqual(2);
    expect(await stat('tls_inspector.alpn_not_found')).toBeGreaterThanOrEqual(1);
    expect(
      fx.proxy.logs.some((l) => /\[filter\].*tls:onServerName\(\), requestedServerName: a\.example\.com/.test(l)),
    ).toBe(true);
  });

  it('shows the chains in /listeners and config_dump', async () => {
    const dump = JSON.parse((await fx.proxy.admin('/config_dump?resource=dynamic_listeners')).body);
    const l = dump.configs.find((c: J) => c.active_state?.listener?.name === 'passthrough').active_state.listener;
    expect(l.filter_chains.map((c: J) => c.filter_chain_match?.server_names)).toEqual([
      ['a.example.com'],
      ['*.b.example.com', 'b.example.com'],
    ]);
    expect((await fx.proxy.admin('/listeners')).body).toContain(
      `passthrough::127.0.0.1:${fx.proxy.port('passthrough')}`,
    );
  });
});

describe('TLS terminated before tcp_proxy', () => {
  it('terminates with the chain picked by SNI and sends plaintext to the backend', async () => {
    const port = fx.proxy.port('terminate');
    expect(await dial(port, 't.example.com', certs.t.cert)).toEqual({ cn: 't.example.com', line: 'plain' });
    expect(await dial(port, undefined)).toEqual({ cn: 'fallback', line: 'plain' });
    expect(await stat(`${listenerPrefix('terminate')}.ssl.handshake`)).toBeGreaterThanOrEqual(2);
    expect(fx.proxy.logs.some((l) => /\[connection\].*\[Tags: "ConnectionId":"\d+"\] handshake complete/.test(l))).toBe(
      true,
    );
  });

  it('a plaintext HTTP/1.1 client on the TLS port: handshake failure counted, closed, the next client served', async () => {
    const port = fx.proxy.port('terminate');
    const before = await stat(`${listenerPrefix('terminate')}.ssl.connection_error`);
    const got = await plaintextHttp(port);
    expect(got).not.toContain('HTTP/1.1 200');
    expect(await stat(`${listenerPrefix('terminate')}.ssl.connection_error`)).toBe(before + 1);
    expect(
      fx.proxy.logs.some((l) => /\[connection\].*remote address:127\.0\.0\.1:\d+,TLS_error:\|.*:TLS_error_end/.test(l)),
    ).toBe(true);
    expect(await dial(port, 't.example.com', certs.t.cert)).toEqual({ cn: 't.example.com', line: 'plain' });
  });
});

describe('bad certificates', () => {
  const withTerminate = (pem: Pem) => [
    ...good().filter((l) => l.name !== 'terminate'),
    sniListener('terminate', [tcpChain('t', ['t.example.com'], 'plain', pem)]),
  ];

  it('NACKs garbage PEM and a key that does not match; the last good listener keeps serving', async () => {
    const garbage = { cert: 'Hello world', key: 'Hello world' };
    let res = await fx.apply({ listeners: withTerminate(garbage), clusters });
    expect(res.nacks.map((n) => n.error_detail?.message).join()).toContain(
      'Failed to load certificate chain from <inline>',
    );
    const mismatched = { cert: certs.t.cert, key: certs.a.key };
    res = await fx.apply({ listeners: withTerminate(mismatched), clusters });
    expect(res.nacks.map((n) => n.error_detail?.message).join()).toContain('Failed to load private key from <inline>');
    expect(await dial(fx.proxy.port('terminate'), 't.example.com', certs.t.cert)).toEqual({
      cn: 't.example.com',
      line: 'plain',
    });
  });

  it('loads an expired certificate and one signed by a CA the client lacks (Envoy does not check them): clients refuse them', async () => {
    const expired = selfSigned('t.example.com', { expired: true });
    let res = await fx.apply({ listeners: withTerminate(expired), clusters });
    expect(res.nacks).toEqual([]);
    expect(await dial(fx.proxy.port('terminate'), 't.example.com', expired.cert)).toEqual({
      error: 'CERT_HAS_EXPIRED',
    });
    const ca: Issued = selfSigned('other-ca', { ca: true });
    const leaf = selfSigned('t.example.com', { issuer: ca });
    res = await fx.apply({ listeners: withTerminate(leaf), clusters });
    expect(res.nacks).toEqual([]);
    const root = selfSigned('trusted-root', { ca: true });
    expect(await dial(fx.proxy.port('terminate'), 't.example.com', root.cert)).toEqual({
      error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
    expect(await dial(fx.proxy.port('terminate'), 't.example.com', ca.cert)).toEqual({
      cn: 't.example.com',
      line: 'plain',
    });
    await fx.apply({ listeners: good(), clusters });
  });
});
