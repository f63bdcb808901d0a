// A scriptable upstream for the proxy's failure-mode tests: it echoes what it received and can answer with a status,
// wait, drop the connection, or fail the first N requests of a key. It counts connections and requests, so tests
// can check pooling and load balancing; `forceStatus` makes it answer every request with one status (a backend
// gone bad, for health checking and outlier detection tests).
import http from 'node:http';
import type net from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestUpstream {
  name: string;
  port: number;
  received: Received[];
  connections: number;
  /** When set, every request (health checks included) is answered with this status and no body. */
  forceStatus: number | undefined;
  close(): Promise<void>;
}

/**
 * Paths: `/status/<code>`, `/delay/<ms>`, `/drop` (closes the socket without answering), `/flaky/<key>/<n>` (503 for
 * the first n requests of that key, then 200); anything else 200 with a JSON echo {name, method, url, headers, body}.
 */
export async function startTestUpstream(
  name = 'upstream',
  /** Where to listen: 127.0.0.1 and a free port unless given (DNS tests put two upstreams on one port, two IPs). */
  at: { host?: string; port?: number } = {},
): Promise<TestUpstream> {
  const received: Received[] = [];
  const flaky = new Map<string, number>();
  const sockets = new Set<net.Socket>();
  const state: { connections: number; forceStatus: number | undefined } = { connections: 0, forceStatus: undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = req.url ?? '/';
      const echo = () => {
        const text = JSON.stringify({ name, method: req.method, url, headers: req.headers, body });
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-upstream': name,
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      };
      const forced = state.forceStatus !== undefined ? [url, String(state.forceStatus)] : null;
      const status = forced ?? /^\/status\/(\d{3})/.exec(url);
      const delay = /^\/delay\/(\d+)/.exec(url);
      const fl = /^\/flaky\/([^/]+)\/(\d+)/.exec(url);
      if (status) {
        res.writeHead(Number(status[1]), { 'x-upstream': name, 'content-length': '0' });
        res.end();
      } else if (delay) {
        const t = setTimeout(echo, Number(delay[1]));
        res.on('close', () => clearTimeout(t));
      } else if (url.startsWith('/drop')) {
        req.socket.destroy();
      } else if (fl) {
        const n = (flaky.get(fl[1]!) ?? 0) + 1;
        flaky.set(fl[1]!, n);
        if (n <= Number(fl[2])) {
          res.writeHead(503, { 'x-upstream': name, 'content-length': '0' });
          res.end();
        } else echo();
      } else {
        echo();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: net.Socket) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: at.host ?? '127.0.0.1', port: at.port ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    name,
    port,
    received,
    get connections() {
      return state.connections;
    },
    get forceStatus() {
      return state.forceStatus;
    },
    set forceStatus(v: number | undefined) {
      state.forceStatus = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** A port with nothing listening on it (bound, then closed). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen({ host: '127.0.0.1', port: 0 }, r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
