// Client certificates on HTTPS filter chains (Envoy's DownstreamTlsContext require_client_certificate and
// common_tls_context.validation_context {trusted_ca, trust_chain_verification}; source/common/tls/cert_validator/
// default_validator.cc; docs configuration/listeners/stats "TLS statistics": ssl.fail_verify_no_cert,
// ssl.fail_verify_error): what Gateway API's GEP-91 frontend validation becomes (AllowValidOnly: required and
// verified; AllowInsecureFallback: ACCEPT_UNTRUSTED, not required), per chain picked by SNI; a chain without
// validation asks for nothing; a trusted_ca that holds no certificate is NACKed with Envoy's words.
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Issued, selfSigned } from '../../shared/testing/certs.ts';
import { HCM_TYPE, ROUTER, startXdsFixture, type XdsFixture } from '../testing/harness.ts';

type J = Record<string, any>;

const TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const ca = selfSigned('client-ca', { ca: true });
const otherCa = selfSigned('other-ca', { ca: true });
const server = selfSigned('server.example.com');
const trusted = selfSigned('trusted-client', { issuer: ca });
const untrusted = selfSigned('untrusted-client', { issuer: otherCa });

function chain(name: string, serverNames: string[], extra: J = {}, validation?: J): J {
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
                routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }],
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
            { certificate_chain: { inline_bytes: b64(server.cert) }, private_key: { inline_bytes: b64(server.key) } },
          ],
          alpn_protocols: ['h2', 'http/1.1'],
          ...(validation ? { validation_context: validation } : {}),
        },
        ...extra,
      },
    },
  };
}

const listener = (name: string, chains: J[]): J => ({
  name,
  address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
  filter_chains: chains,
});

const listeners = () => [
  listener('mtls', [
    // What the control plane sends for AllowValidOnly (xds/translator/tls.ts).
    chain(
      'strict',
      ['strict.example.com'],
      { require_client_certificate: true },
      { trusted_ca: { inline_string: ca.cert } },
    ),
    // AllowInsecureFallback.
    chain(
      'fallback',
      ['fallback.example.com'],
      {},
      { trusted_ca: { inline_string: ca.cert }, trust_chain_verification: 'ACCEPT_UNTRUSTED' },
    ),
    chain('plain', ['plain.example.com']),
  ]),
  // A default chain (no server_names) that requires a certificate: clients without SNI get it too.
  listener('default-strict', [
    chain('strict-default', [], { require_client_certificate: true }, { trusted_ca: { inline_string: ca.cert } }),
  ]),
];

/** One HTTPS request with that SNI and client certificate: "<status> <body>", or the error code. */
function get(port: number, servername: string | undefined, client?: Issued): Promise<string> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        agent: false,
        rejectUnauthorized: false,
        ...(servername ? { servername } : {}),
        ...(client ? { cert: client.cert, key: client.key } : {}),
        headers: { host: servername ?? 'example.com' },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve(`${res.statusCode} ${body}`));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

let fx: XdsFixture;

beforeAll(async () => {
  fx = await startXdsFixture();
  const res = await fx.apply({ listeners: listeners(), clusters: [] });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
});

async function stat(port: number, name: string): Promise<number> {
  const filter = encodeURIComponent(`^listener\\.127\\.0\\.0\\.1_${port}\\.ssl\\.${name}$`);
  const body = (await fx.proxy.admin(`/stats?filter=${filter}`)).body;
  return Number(/: (\d+)/.exec(body)?.[1] ?? 0);
}

describe('client certificates (validation_context, require_client_certificate)', () => {
  it('require_client_certificate: a trusted certificate is served; none fails the handshake (fail_verify_no_cert); an untrusted one is refused (fail_verify_error)', async () => {
    const port = fx.proxy.port('mtls');
    const before = { noCert: await stat(port, 'fail_verify_no_cert'), bad: await stat(port, 'fail_verify_error') };
    expect(await get(port, 'strict.example.com', trusted)).toBe('200 ok');
    expect(await get(port, 'strict.example.com')).not.toMatch(/^200/);
    expect(await get(port, 'strict.example.com', untrusted)).not.toMatch(/^200/);
    await vi.waitFor(async () => {
      expect(await stat(port, 'fail_verify_no_cert')).toBe(before.noCert + 1);
      expect(await stat(port, 'fail_verify_error')).toBe(before.bad + 1);
    });
  });

  it('ACCEPT_UNTRUSTED without require_client_certificate: trusted, untrusted and no certificate all served (the untrusted one counted)', async () => {
    const port = fx.proxy.port('mtls');
    const bad = await stat(port, 'fail_verify_error');
    expect(await get(port, 'fallback.example.com', trusted)).toBe('200 ok');
    expect(await get(port, 'fallback.example.com', untrusted)).toBe('200 ok');
    expect(await get(port, 'fallback.example.com')).toBe('200 ok');
    await vi.waitFor(async () => expect(await stat(port, 'fail_verify_error')).toBe(bad + 1));
  });

  it('a chain without validation_context on the same listener asks for nothing: served with or without a certificate', async () => {
    const port = fx.proxy.port('mtls');
    expect(await get(port, 'plain.example.com')).toBe('200 ok');
    expect(await get(port, 'plain.example.com', untrusted)).toBe('200 ok');
  });

  it('the default chain requires one from clients without SNI too', async () => {
    const port = fx.proxy.port('default-strict');
    expect(await get(port, undefined, trusted)).toBe('200 ok');
    expect(await get(port, undefined)).not.toMatch(/^200/);
    expect(await get(port, undefined, untrusted)).not.toMatch(/^200/);
    expect(await get(port, 'any.example.com')).not.toMatch(/^200/);
    expect(await get(port, 'any.example.com', trusted)).toBe('200 ok');
  });

  it('NACKs a trusted_ca without a certificate and validation fields it does not honour; the last good config serves', async () => {
    const bad = (validation: J, extra: J = {}) => [
      listener('mtls', [chain('x', [], extra, validation)]),
      listeners()[1],
    ];
    let res = await fx.apply({ listeners: bad({ trusted_ca: { inline_string: 'not a certificate' } }) });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      'Error adding/updating listener(s) mtls: Failed to load trusted CA certificates from <inline>',
    ]);
    res = await fx.apply({
      listeners: bad({
        trusted_ca: { inline_string: ca.cert },
        match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'x' } }],
      }),
    });
    expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([
      'Error adding/updating listener(s) mtls: listener mtls: filter_chains[0]: validation_context.match_typed_subject_alt_names is not supported',
    ]);
    expect(await get(fx.proxy.port('mtls'), 'strict.example.com', trusted)).toBe('200 ok');
  });
});
