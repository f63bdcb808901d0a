// bench:proxy's bare pass-through proxies for the HTTPS and HTTP/2 paths, the runtime's ceiling for each protocol:
// `node:tls` + `node:http` (https.createServer, ALPN http/1.1), `node:http2` over TLS (ALPN h2) and `node:http2` in
// the clear (h2c with prior knowledge); each forwards to the sample application over HTTP/1.1 with one undici Pool,
// as bare-proxy.ts does for plain HTTP/1.1. One process (`node bench/proxy.ts --bare-protocols <app port> <cert> <key>`)
// prints `bare-protocols listening <https> <h2> <h2c>` once all three listen.
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import type net from 'node:net';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';

/** Hop-by-hop (RFC 9110 §7.6.1) and HTTP/2 connection-specific headers a proxy does not forward. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'host']);

type Headers = Record<string, string | string[] | undefined>;

function endToEnd(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP.has(k) && k[0] !== ':') out[k] = v;
  return out;
}

type Req = { url?: string; method?: string; headers: Headers } & Readable;
type Res = { writeHead(s: number, h?: Headers): unknown; write(c: Uint8Array): unknown; end(): unknown };

export async function bareProtocols(upstreamPort: number, certFile: string, keyFile: string): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 128, pipelining: 1 });
  const handler = (req: Req, res: Res) => {
    const headers = endToEnd(req.headers);
    headers.host = String(req.headers.host ?? req.headers[':authority'] ?? '');
    pool
      .request({
        path: req.url ?? '/',
        method: req.method as 'GET',
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      })
      .then(async (r) => {
        res.writeHead(r.statusCode, endToEnd(r.headers as Headers));
        for await (const chunk of r.body) res.write(chunk);
        res.end();
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  };
  const cert = readFileSync(certFile);
  const key = readFileSync(keyFile);
  const h1 = https.createServer({ cert, key, ALPNProtocols: ['http/1.1'], keepAliveTimeout: 65_000 }, handler as any);
  const h2 = http2.createSecureServer({ cert, key }, handler as any);
  const h2c = http2.createServer(handler as any);
  const ports: number[] = [];
  for (const s of [h1, h2, h2c] as net.Server[]) {
    await new Promise<void>((r) => s.listen({ host: '127.0.0.1', port: 0 }, r));
    ports.push((s.address() as net.AddressInfo).port);
  }
  process.stdout.write(`bare-protocols listening ${ports.join(' ')}\n`);
}
