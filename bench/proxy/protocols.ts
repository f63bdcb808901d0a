// bench:proxy's HTTPS and HTTP/2 phase (issue 12, "Performance"): the proxy against bare pass-through proxies in the
// same runtime (bare-protocols.ts: node:tls + node:http, node:http2 over TLS, node:http2 h2c), both forwarding to the
// sample application over HTTP/1.1, in the same run. The proxy runs the bench's route table (route-table.ts) with a
// second listener terminating TLS (ALPN h2, http/1.1, as the control plane configures HTTPS listeners); its plain
// listener serves h2c (codec AUTO). Per protocol two rounds (bare then proxy, proxy then bare), each run after a 2 s
// warm-up, DURATION seconds of CONNECTIONS loops (protocol-load.ts): HTTPS/1.1 kept alive, h2 over TLS and h2c
// (CONNECTIONS streams over H2_SESSIONS sessions), and HTTPS/1.1 with a new TLS connection per request (handshakes/s).
// Throughput ratio proxy/bare per protocol (target ≥ 0.8), errors (target 0).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rsaCert } from '../../conformance/utils/certificates.ts';
import { startNode } from '../shared/processes.ts';
import { progress } from '../shared/reports.ts';
import { round2 } from '../shared/stats.ts';
import { h2Load, httpsLoad, type LoadResult, type LoadTarget } from './protocol-load.ts';
import { proxyBootstrap } from './route-table.ts';
import { httpGet, type Servers, startProxyProcess } from './servers.ts';
import { APP_PATH, BENCH_ENTRY, CONNECTIONS, DURATION, HOST, type J, PROXY_PATH } from './settings.ts';

const step = progress('proxy');
/** HTTP/2 sessions the CONNECTIONS streams share (a browser or a gRPC channel opens few). */
const H2_SESSIONS = 5;
/** Loops opening a new TLS connection per request (handshakes/s). */
const HANDSHAKE_CONCURRENCY = 10;

export const PROTOCOLS = ['https', 'h2', 'h2c', 'https-handshake'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface ProtocolRun {
  bare: LoadResult;
  proxy: LoadResult;
  ratio: number;
}
export type Protocols = Record<Protocol, ProtocolRun>;

/** The bench's bootstrap with a TLS listener beside the plain one (same HCM, ALPN h2 and http/1.1). */
function tlsBootstrap(appPort: number, pem: { cert: string; key: string }): J {
  const b = proxyBootstrap(appPort);
  const plain = b.static_resources.listeners[0];
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const tls = structuredClone(plain);
  tls.name = 'listener~8443';
  tls.filter_chains[0].filters[0].typed_config.stat_prefix = 'https';
  tls.filter_chains[0].transport_socket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      common_tls_context: {
        tls_certificates: [
          { certificate_chain: { inline_bytes: b64(pem.cert) }, private_key: { inline_bytes: b64(pem.key) } },
        ],
        alpn_protocols: ['h2', 'http/1.1'],
      },
    },
  };
  b.static_resources.listeners.push(tls);
  return b;
}

/** Two windows of equal length as one: mean req/s, summed requests and errors, the worse p50/p99. */
function combine(rs: LoadResult[]): LoadResult {
  return {
    rps: Math.round(rs.reduce((n, r) => n + r.rps, 0) / rs.length),
    p50: Math.max(...rs.map((r) => r.p50)),
    p99: Math.max(...rs.map((r) => r.p99)),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    requests: rs.reduce((n, r) => n + r.requests, 0),
  };
}

function run(p: Protocol, t: LoadTarget, seconds: number): Promise<LoadResult> {
  if (p === 'https') return httpsLoad(t, { concurrency: CONNECTIONS, seconds, newConnection: false });
  if (p === 'https-handshake')
    return httpsLoad(t, { concurrency: HANDSHAKE_CONCURRENCY, seconds, newConnection: true });
  return h2Load(t, { concurrency: CONNECTIONS, sessions: H2_SESSIONS, seconds });
}

export async function protocolsPhase(servers: Servers, dir: string): Promise<Protocols> {
  step(`HTTPS and HTTP/2: proxy against bare node:tls/node:http2 proxies, ${DURATION} s per path (after 2 s warm-up)`);
  const pem = rsaCert([HOST], 'server');
  const certFile = join(dir, 'bench.crt');
  const keyFile = join(dir, 'bench.key');
  writeFileSync(certFile, pem.cert);
  writeFileSync(keyFile, pem.key);
  const bare = await startNode(
    [BENCH_ENTRY, '--bare-protocols', String(servers.appPort), certFile, keyFile],
    /bare-protocols listening (\d+) (\d+) (\d+)/,
    'bare protocol proxies',
  );
  const proxy = await startProxyProcess(tlsBootstrap(servers.appPort, pem), dir, 'protocols');
  const statuses = JSON.parse(await httpGet(`http://${proxy.admin}/listeners?format=json`)).listener_statuses as J[];
  const portOf = (name: string) =>
    statuses.find((l) => l.name === name)!.local_address.socket_address.port_value as number;
  const tls = { ca: pem.cert, servername: HOST };
  const targets: Record<Protocol, { bare: LoadTarget; proxy: LoadTarget }> = {
    https: {
      bare: { port: Number(bare.match[1]), path: APP_PATH, host: HOST, tls },
      proxy: { port: portOf('listener~8443'), path: PROXY_PATH, host: HOST, tls },
    },
    h2: {
      bare: { port: Number(bare.match[2]), path: APP_PATH, host: HOST, tls },
      proxy: { port: portOf('listener~8443'), path: PROXY_PATH, host: HOST, tls },
    },
    h2c: {
      bare: { port: Number(bare.match[3]), path: APP_PATH, host: HOST },
      proxy: { port: portOf('listener~8080'), path: PROXY_PATH, host: HOST },
    },
    'https-handshake': {
      bare: { port: Number(bare.match[1]), path: APP_PATH, host: HOST, tls },
      proxy: { port: portOf('listener~8443'), path: PROXY_PATH, host: HOST, tls },
    },
  };
  const out = {} as Protocols;
  try {
    for (const p of PROTOCOLS) {
      // Two rounds in rotated order (bare, proxy; proxy, bare), so neither path always runs on the busier half of a
      // shared machine's minute; the figures are the two windows together.
      const runs: Record<'bare' | 'proxy', LoadResult[]> = { bare: [], proxy: [] };
      for (const order of [['bare', 'proxy'] as const, ['proxy', 'bare'] as const]) {
        for (const who of order) {
          await run(p, targets[p][who], 2);
          const r = await run(p, targets[p][who], DURATION);
          runs[who].push(r);
          step(`  ${p} ${who}: ${r.rps} req/s p50 ${r.p50} ms p99 ${r.p99} ms errors ${r.errors}`);
        }
      }
      const bare = combine(runs.bare);
      const proxy = combine(runs.proxy);
      out[p] = { bare, proxy, ratio: round2(proxy.rps / Math.max(1, bare.rps)) };
      step(`  ${p}: proxy/bare ${out[p].ratio}`);
    }
  } finally {
    proxy.child.kill();
    bare.child.kill();
  }
  return out;
}
