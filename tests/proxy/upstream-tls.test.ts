// TLS from the proxy to upstream hosts (a cluster's transport_socket envoy.transport_sockets.tls UpstreamTlsContext,
// system/proxy/upstream/tls-transport.ts), against node:https upstreams with certificates from the conformance
// suite's generator (conformance/utils/certificates.ts, here because it spans parts): the SNI sent, the CA verified
// (a certificate from another CA: 503 with Envoy's body "upstream connect error or disconnect/reset before headers.
// reset reason: connection failure, transport failure reason: TLS_error:|268435581:SSL routines:OPENSSL_internal:
// CERTIFICATE_VERIFY_FAILED:TLS_error_end", flag UF, cluster.<c>.ssl.fail_verify_error and upstream_cx_connect_fail;
// ssl_socket.cc, default_validator.cc), the subject alt names as match_typed_subject_alt_names (DNS, URI; a miss is
// ssl.fail_verify_san), a plaintext upstream (WRONG_VERSION_NUMBER), a client certificate presented, config_dump
// showing the transport socket, and what the proxy cannot honour NACKed.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type tls from 'node:tls';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ca, caCert, rsaCert } from '../../conformance/utils/certificates.ts';
import {
  cla,
  edsCluster,
  eventually,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../../system/proxy/testing/harness.ts';

type J = Record<string, any>;
const UPSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const pemOf = (ca: Ca) => forge.pki.certificateToPem(ca.cert);

function tlsSocket(o: { ca?: string; sni?: string; sans?: J[]; extra?: J; common?: J }): J {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': UPSTREAM_TLS,
      common_tls_context: {
        ...(o.ca
          ? {
              validation_context: {
                trusted_ca: { inline_string: o.ca },
                ...(o.sans ? { match_typed_subject_alt_names: o.sans } : {}),
              },
            }
          : {}),
        ...(o.common ?? {}),
      },
      ...(o.sni ? { sni: o.sni } : {}),
      ...(o.extra ?? {}),
    },
  };
}

const dns = (v: string) => ({ san_type: 'DNS', matcher: { exact: v } });
const uri = (v: string) => ({ san_type: 'URI', matcher: { exact: v } });

let fx: XdsFixture;
let ca: Ca;
let otherCa: Ca;
let tlsServer: https.Server;
let plainServer: http.Server;
const seen: { sni: string; path: string; clientCn: string }[] = [];

beforeAll(async () => {
  ca = caCert();
  otherCa = caCert();
  const server = rsaCert(['abc.example.com', 'spiffe://abc.example.com/test-identity'], 'server', ca);
  tlsServer = https.createServer(
    { cert: server.cert, key: server.key, ca: pemOf(ca), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const sock = req.socket as tls.TLSSocket;
      const entry = {
        sni: String((sock as { servername?: string }).servername ?? ''),
        path: req.url ?? '',
        clientCn: String(sock.getPeerCertificate()?.subject?.CN ?? ''),
      };
      seen.push(entry);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(entry));
    },
  );
  plainServer = http.createServer((_req, res) => res.end('plain'));
  await Promise.all([
    new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r)),
    new Promise<void>((r) => plainServer.listen(0, '127.0.0.1', r)),
  ]);
  fx = await startXdsFixture({ level: 'debug' });
});

afterAll(async () => {
  await fx?.close();
  tlsServer?.closeAllConnections();
  plainServer?.closeAllConnections();
  // A server a failed beforeAll never made has nothing to close (a `?.close(r)` would never resolve).
  const close = (s: http.Server | undefined) => (s ? new Promise((r) => s.close(r)) : undefined);
  await Promise.all([close(tlsServer), close(plainServer)]);
});

async function applyClusters(clusters: Record<string, J | undefined>, upstream: Record<string, 'tls' | 'plain'> = {}) {
  const names = Object.keys(clusters);
  const port = (n: string) => ((upstream[n] === 'plain' ? plainServer : tlsServer).address() as AddressInfo).port;
  return fx.apply({
    clusters: names.map((n) => edsCluster(n, clusters[n] ? { transport_socket: clusters[n] } : {})),
    endpoints: names.map((n) => cla(n, [['127.0.0.1', port(n)]])),
    listeners: [listener('http', 0)],
    routes: [
      routeConfig('http', [
        vhost(
          'all',
          ['*'],
          names.map((n) => route(`/${n}`, n)),
        ),
      ]),
    ],
  });
}

const get = (path: string) => httpRequest(`http://127.0.0.1:${fx.proxy.port('http')}${path}`, { agent: false });
const counter = async (name: string) => {
  const r = await fx.proxy.admin(`/stats?format=json&filter=${encodeURIComponent(`^${name}$`)}`);
  return (JSON.parse(r.body).stats as { name: string; value: number }[]).find((s) => s.name === name)?.value;
};

const VERIFY_FAILED =
  'upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: TLS_error:|268435581:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED:TLS_error_end';

describe('TLS to upstreams (UpstreamTlsContext)', () => {
  it('speaks TLS with the SNI, verifies the CA and the DNS SAN, and counts the handshake', async () => {
    const r = await applyClusters({
      good: tlsSocket({ ca: pemOf(ca), sni: 'abc.example.com', sans: [dns('abc.example.com')] }),
    });
    expect(r.nacks).toEqual([]);
    const res = await eventually(async () => {
      const x = await get('/good');
      return x.status === 200 ? x : undefined;
    });
    expect(JSON.parse(res.body)).toMatchObject({ sni: 'abc.example.com', path: '/good' });
    expect(await counter('cluster.good.ssl.handshake')).toBeGreaterThanOrEqual(1);
    const dump = JSON.parse((await fx.proxy.admin('/config_dump?resource=dynamic_active_clusters')).body);
    const ts = dump.configs.find((c: J) => c.cluster.name === 'good').cluster.transport_socket;
    expect(ts.typed_config).toMatchObject({ '@type': UPSTREAM_TLS, sni: 'abc.example.com' });
  });

  it('answers 503 UF with the TLS error when the certificate is not from the trusted CA', async () => {
    await applyClusters({ wrongca: tlsSocket({ ca: pemOf(otherCa), sni: 'abc.example.com' }) });
    const res = await eventually(async () => {
      const x = await get('/wrongca');
      return x.status === 503 && x.body.includes('TLS_error') ? x : undefined;
    });
    expect(res.body).toBe(VERIFY_FAILED);
    await eventually(() => fx.proxy.access.some((l) => l.includes('"GET /wrongca HTTP/1.1" 503 UF ')), 5000, 'UF');
    expect(await counter('cluster.wrongca.ssl.fail_verify_error')).toBeGreaterThanOrEqual(1);
    expect(await counter('cluster.wrongca.ssl.connection_error')).toBeGreaterThanOrEqual(1);
    expect(await counter('cluster.wrongca.upstream_cx_connect_fail')).toBeGreaterThanOrEqual(1);
    expect(fx.proxy.logs.some((l) => l.includes('verify cert failed:'))).toBe(true);
  });

  it('matches subject alt names as match_typed_subject_alt_names (URI ok; a DNS name the certificate lacks: 503)', async () => {
    await applyClusters({
      spiffe: tlsSocket({
        ca: pemOf(ca),
        sni: 'abc.example.com',
        sans: [uri('spiffe://abc.example.com/test-identity')],
      }),
      mismatch: tlsSocket({ ca: pemOf(ca), sni: 'mismatch.example.com', sans: [dns('mismatch.example.com')] }),
    });
    const ok = await eventually(async () => {
      const x = await get('/spiffe');
      return x.status === 200 ? x : undefined;
    });
    expect(JSON.parse(ok.body).sni).toBe('abc.example.com');
    const bad = await get('/mismatch');
    expect([bad.status, bad.body]).toEqual([503, VERIFY_FAILED]);
    expect(await counter('cluster.mismatch.ssl.fail_verify_san')).toBeGreaterThanOrEqual(1);
  });

  it('reports a plaintext upstream as the TLS library does (WRONG_VERSION_NUMBER)', async () => {
    await applyClusters({ plain: tlsSocket({ ca: pemOf(ca), sni: 'abc.example.com' }) }, { plain: 'plain' });
    const res = await eventually(async () => {
      const x = await get('/plain');
      return x.status === 503 && x.body.includes('TLS_error') ? x : undefined;
    });
    expect(res.body).toContain(
      'reset reason: connection failure, transport failure reason: TLS_error:|268435703:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER:TLS_error_end',
    );
  });

  it('presents the client certificate of tls_certificates', async () => {
    const client = rsaCert([], 'client', ca);
    await applyClusters({
      mtls: tlsSocket({
        ca: pemOf(ca),
        sni: 'abc.example.com',
        common: {
          tls_certificates: [
            { certificate_chain: { inline_string: client.cert }, private_key: { inline_string: client.key } },
          ],
        },
      }),
    });
    const res = await eventually(async () => {
      const x = await get('/mtls');
      return x.status === 200 ? x : undefined;
    });
    expect(JSON.parse(res.body).clientCn).toBe('default');
    const dump = (await fx.proxy.admin('/config_dump?resource=dynamic_active_clusters')).body;
    expect(dump).not.toContain('PRIVATE KEY');
    expect(dump).toMatch(/"private_key": \{\s*"inline_string": "\[redacted\]"/);
  });

  it('NACKs what it cannot honour: an unknown UpstreamTlsContext field, h2 ALPN, SANs without a trusted CA', async () => {
    for (const [ts, reason] of [
      [
        tlsSocket({ ca: pemOf(ca), extra: { enforce_rsa_key_usage: true } }),
        'UpstreamTlsContext.enforce_rsa_key_usage is not supported',
      ],
      [tlsSocket({ ca: pemOf(ca), common: { alpn_protocols: ['h2'] } }), 'only http/1.1 is supported upstream'],
      [
        {
          name: 'envoy.transport_sockets.tls',
          typed_config: {
            '@type': UPSTREAM_TLS,
            common_tls_context: { validation_context: { match_typed_subject_alt_names: [dns('a')] } },
          },
        },
        'SAN-based verification of peer certificates without trusted CA is insecure and not allowed',
      ],
      [tlsSocket({ ca: 'not a pem' }), 'Failed to load trusted CA certificates from <inline>'],
    ] as [J, string][]) {
      const r = await fx.apply({ clusters: [edsCluster('refused', { transport_socket: ts })] });
      expect(r.nacks.map((n) => n.error_detail?.message).join('\n')).toContain(reason);
    }
  });
});
