// bench:proxy's "bare" path: a pass-through HTTP proxy in plain Node (node:http server + undici Pool, hop-by-hop
// headers dropped), the runtime's ceiling for any proxy written on it. It runs in its own process
// (`node bench/proxy.ts --bare <app port>`) and prints `bare listening <port>` when it listens.
import http from 'node:http';
import type net from 'node:net';
import { Pool } from 'undici';

/** Hop-by-hop headers (RFC 9110 section 7.6.1) a proxy does not forward. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te']);

function endToEnd(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

export async function bareProxy(upstreamPort: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 128, pipelining: 1 });
  const server = http.createServer((req, res) => {
    pool
      .request({
        path: req.url ?? '/',
        method: req.method as 'GET',
        headers: endToEnd(req.headers),
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      })
      .then(async (r) => {
        res.writeHead(r.statusCode, endToEnd(r.headers));
        for await (const chunk of r.body) res.write(chunk);
        res.end();
      })
      .catch(() => {
        res.writeHead(502).end();
      });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen({ host: '127.0.0.1', port: 0 }, r));
  process.stdout.write(`bare listening ${(server.address() as net.AddressInfo).port}\n`);
}
