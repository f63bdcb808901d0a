// TLS filter chains of one HTTPS listener whose connection managers name different RDS route configurations (what
// the control plane sends for misdirected-request detection: Gateway API HTTPRouteHTTPSListenerDetectMisdirectedRequests,
// xds/translator/route.ts): a request is routed by the route configuration of the chain its connection's SNI chose,
// over HTTP/1.1 and HTTP/2 (a coalesced HTTP/2 connection sending another :authority gets that chain's 421), and a
// client without SNI by the default chain's. Envoy does the same: each filter chain has its own HCM instance
// (envoy/config/listener/v3/listener_components.proto FilterChain.filters).
import http2 from 'node:http2';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSigned } from '../../shared/testing/certs.ts';
import { HCM_TYPE, ROUTER, startXdsFixture, type XdsFixture } from '../testing/harness.ts';

type J = Record<string, any>;

const TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const cert = selfSigned('example.com');

function chain(name: string, serverNames: string[], rds: string): J {
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
          rds: { route_config_name: rds, config_source: { ads: {}, resource_api_version: 'V3' } },
        },
      },
    ],
    transport_socket: {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': TLS_CONTEXT,
        common_tls_context: {
          tls_certificates: [
            { certificate_chain: { inline_bytes: b64(cert.cert) }, private_key: { inline_bytes: b64(cert.key) } },
          ],
          alpn_protocols: ['h2', 'http/1.1'],
        },
      },
    },
  };
}

const answer = (status: number, body?: string) => ({
  match: { prefix: '/' },
  direct_response: { status, ...(body ? { body: { inline_string: body } } : {}) },
});

const routes = [
  {
    name: 'rc-a',
    virtual_hosts: [
      { name: 'a', domains: ['a.example.com'], routes: [answer(200, 'a')] },
      { name: 'a-misdirected', domains: ['b.example.com', '*'], routes: [answer(421)] },
    ],
  },
  {
    name: 'rc-default',
    virtual_hosts: [
      { name: 'b', domains: ['b.example.com'], routes: [answer(200, 'b')] },
      { name: 'default-misdirected', domains: ['a.example.com'], routes: [answer(421)] },
    ],
  },
];

let fx: XdsFixture;

beforeAll(async () => {
  fx = await startXdsFixture();
  const res = await fx.apply({
    listeners: [
      {
        name: 'https',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }],
        filter_chains: [chain('a', ['a.example.com'], 'rc-a'), chain('default', [], 'rc-default')],
      },
    ],
    routes,
    clusters: [],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
});

/** HTTP/1.1 over TLS with that SNI (none: undefined) and Host: "<status> <body>". */
function h1(servername: string | undefined, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: fx.proxy.port('https'),
        path: '/',
        agent: false,
        rejectUnauthorized: false,
        ALPNProtocols: ['http/1.1'],
        ...(servername ? { servername } : {}),
        headers: { host },
      } as https.RequestOptions,
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve(`${res.statusCode} ${body}`));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Requests for each :authority on ONE HTTP/2 connection made with that SNI (connection coalescing). */
async function h2(servername: string, authorities: string[]): Promise<string[]> {
  const session = http2.connect(`https://127.0.0.1:${fx.proxy.port('https')}`, {
    servername,
    rejectUnauthorized: false,
  });
  try {
    const out: string[] = [];
    for (const authority of authorities) {
      out.push(
        await new Promise<string>((resolve, reject) => {
          const s = session.request({ ':path': '/', ':authority': authority });
          let status = 0;
          let body = '';
          s.on('response', (h) => {
            status = Number(h[':status']);
          });
          s.on('data', (d) => {
            body += d;
          });
          s.on('end', () => resolve(`${status} ${body}`));
          s.on('error', reject);
          s.end();
        }),
      );
    }
    return out;
  } finally {
    session.close();
  }
}

describe("each TLS chain's own route configuration", () => {
  it('HTTP/1.1: the SNI picks the chain, the Host the virtual host of its route configuration', async () => {
    expect(await h1('a.example.com', 'a.example.com')).toBe('200 a');
    expect(await h1('a.example.com', 'b.example.com')).toBe('421 ');
    expect(await h1('a.example.com', 'c.example.com')).toBe('421 ');
    expect(await h1('b.example.com', 'b.example.com')).toBe('200 b');
    expect(await h1('b.example.com', 'a.example.com')).toBe('421 ');
    expect(await h1('c.example.com', 'c.example.com')).toBe('404 ');
    expect(await h1(undefined, 'b.example.com')).toBe('200 b');
  });

  it('HTTP/2: one connection (SNI a.example.com) used for other authorities gets 421 for them', async () => {
    expect(await h2('a.example.com', ['a.example.com', 'b.example.com', 'a.example.com'])).toEqual([
      '200 a',
      '421 ',
      '200 a',
    ]);
    expect(await h2('b.example.com', ['b.example.com', 'a.example.com'])).toEqual(['200 b', '421 ']);
  });

  it('subscribes to every chain route configuration', async () => {
    const dump = JSON.parse((await fx.proxy.admin('/config_dump?resource=dynamic_route_configs')).body);
    const names = dump.configs.map((c: J) => c.route_config.name).sort();
    expect(names).toEqual(['rc-a', 'rc-default']);
  });
});
