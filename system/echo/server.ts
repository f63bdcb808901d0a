// The echo server's listeners and handler, after upstream's echo-basic (Gateway API v1.6.1
// conformance/echo-basic/echo-basic.go): HTTP/1.1 on HTTP_PORT (3000), h2c on H2C_PORT (3001: HTTP/2 with prior
// knowledge; an HTTP/1.1 request there without `Upgrade: h2c` is a 400 "Expected h2c request", as upstream), HTTPS
// (HTTP/1.1 and h2 by ALPN) on HTTPS_PORT (8443) when TLS_SERVER_CERT and TLS_SERVER_PRIVKEY name files, asking for
// a client certificate checked against TLS_CLIENT_CACERTS when given (Go's VerifyClientCertIfGiven). Routes: /health,
// /status/<code>, /retry/?uuid=&succeedAfter=[&responseCode=][&delayRetry=] (fails the first attempts of a uuid by
// resetting the connection or answering responseCode), anything else echoes the request as JSON (`delay=<duration>`
// waits first); /ws is the WebSocket echo (ws.ts) on the HTTP and HTTPS ports, a plain request there a 400 as
// Go's websocket.Handler answers it.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net, { type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { listenOn } from '../shared/listen.ts';
import {
  contextFromEnv,
  type EchoContext,
  echoBody,
  echoSetHeaders,
  parseGoDuration,
  routedPath,
  statusCodeOf,
  type TlsAssertions,
} from './response.ts';
import { wsUpgradeHandler } from './ws.ts';

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

/** Writes a status and an optional text body (the two response types share this much). */
function answer(res: Res, code: number, text = ''): void {
  (res as http.ServerResponse).writeHead(code);
  res.end(text);
}

export interface EchoOptions {
  host?: string;
  httpPort?: number;
  h2cPort?: number;
  httpsPort?: number;
  /** PEM files: serve HTTPS when both are given. */
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  context?: EchoContext;
  log?: (line: string) => void;
}

export interface EchoServer {
  http: number;
  h2c: number;
  https?: number;
  close(): Promise<void>;
}

function rawHeaders(req: Req): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) out[raw[i]] = [...(out[raw[i]] ?? []), raw[i + 1]];
  return out;
}

function tlsOf(req: Req): TlsAssertions | undefined {
  const sock = req.socket as TLSSocket;
  if (!sock || typeof sock.getProtocol !== 'function') return undefined;
  const peers: string[] = [];
  let cert = sock.getPeerCertificate(true);
  const seen = new Set<string>();
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    const b64 = cert.raw.toString('base64').replace(/.{64}/g, '$&\n');
    peers.push(`-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`);
    cert = cert.issuerCertificate;
  }
  const alpn = sock.alpnProtocol;
  return {
    version: sock.getProtocol() ?? '',
    ...(peers.length ? { peerCertificates: peers } : {}),
    serverName: typeof (sock as { servername?: unknown }).servername === 'string' ? (sock as any).servername : '',
    ...(alpn ? { negotiatedProtocol: alpn } : {}),
    cipherSuite: sock.getCipher()?.standardName ?? '',
  };
}

function sendJson(res: Res, code: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body, null, ' ');
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  answer(res, code, text);
}

/** The request handler shared by every listener; `httpPort` is what the body reports as `httpPort`. */
export function echoHandler(ctx: EchoContext, httpPort: string, log: (l: string) => void = () => {}) {
  const attempts = new Map<string, number>();
  const delay = async (q: URLSearchParams, key: string) => {
    const d = q.get(key);
    if (d) await new Promise((r) => setTimeout(r, parseGoDuration(d)));
  };
  const echo = async (req: Req, res: Res, q: URLSearchParams) => {
    await delay(q, 'delay');
    const host = (req.headers[':authority'] as string | undefined) ?? req.headers.host ?? '';
    const body = echoBody(
      {
        uri: req.url ?? '/',
        host,
        method: req.method ?? 'GET',
        proto: `HTTP/${req.httpVersionMajor}.${req.httpVersionMinor}`,
        headers: rawHeaders(req),
        tls: tlsOf(req),
      },
      ctx,
      httpPort,
    );
    const set = req.headers['x-echo-set-header'];
    sendJson(res, 200, body, echoSetHeaders(set === undefined ? undefined : Array.isArray(set) ? set : [set]));
  };
  const retry = async (req: Req, res: Res, q: URLSearchParams) => {
    const uuid = q.get('uuid');
    if (!uuid) return answer(res, 400, 'uuid is required');
    const succeedAfter = Number.parseInt(q.get('succeedAfter') ?? '', 10);
    if (Number.isNaN(succeedAfter)) return answer(res, 400, 'succeedAfter is required');
    const n = attempts.get(uuid) ?? 0;
    if (n >= succeedAfter) return echo(req, res, q);
    attempts.set(uuid, n + 1);
    await delay(q, 'delayRetry');
    const code = Number.parseInt(q.get('responseCode') ?? '', 10);
    if (!Number.isNaN(code)) return answer(res, code);
    // No responseCode: the connection is reset (Go: SetLinger(0) and Close).
    (req.socket as Socket).resetAndDestroy();
  };
  return (req: Req, res: Res) => {
    const uri = req.url ?? '/';
    const path = routedPath(uri);
    const q = new URL(uri, 'http://echo').searchParams;
    log(`Echoing back request made to ${uri} to client (${req.socket?.remoteAddress}:${req.socket?.remotePort})`);
    const run = async () => {
      if (path === '/health') return answer(res, 200, 'OK');
      if (path.startsWith('/status/')) return answer(res, statusCodeOf(uri));
      if (path.startsWith('/retry/')) return retry(req, res, q);
      if (path === '/ws') return answer(res, 400, 'Bad Request');
      return echo(req, res, q);
    };
    run().catch((err: Error) => sendJson(res, 500, { message: err.message }));
  };
}

/** A Duplex over `sock` whose readable side starts with `first`. */
function replay(sock: Socket, first: Buffer): Duplex {
  const d = new Duplex({
    read() {
      sock.resume();
    },
    write(chunk, enc, cb) {
      sock.write(chunk, enc, cb);
    },
    final(cb) {
      sock.end(cb);
    },
    destroy(err, cb) {
      sock.destroy(err ?? undefined);
      cb(err);
    },
  });
  d.push(first);
  sock.on('data', (c) => {
    if (!d.push(c)) sock.pause();
  });
  sock.on('end', () => d.push(null));
  sock.on('error', (err) => d.destroy(err));
  sock.on('close', () => d.destroy());
  return d;
}

/** The h2c port: HTTP/2 prior knowledge goes to an HTTP/2 server, HTTP/1.1 to one that wants `Upgrade: h2c`. */
function h2cServer(handler: ReturnType<typeof echoHandler>): { front: net.Server; closeAll(): void } {
  const h2 = http2.createServer(handler);
  const h1 = http.createServer((req, res) => {
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'h2c') return answer(res, 400, 'Expected h2c request');
    handler(req, res);
  });
  const sockets = new Set<Socket>();
  const front = net.createServer((sock) => {
    sockets.add(sock);
    sock.once('close', () => sockets.delete(sock));
    sock.once('data', (first) => {
      sock.pause();
      if (first.subarray(0, 3).toString() !== 'PRI') {
        sock.unshift(first);
        h1.emit('connection', sock);
        sock.resume();
        return;
      }
      // The HTTP/2 session reads its socket's handle directly (bytes put back with unshift would be lost): it gets a
      // stream that starts with the bytes already read, then the socket's.
      h2.emit('connection', replay(sock, first));
    });
  });
  return {
    front,
    closeAll: () => {
      for (const s of sockets) s.destroy();
    },
  };
}

export async function startEcho(opts: EchoOptions = {}): Promise<EchoServer> {
  const host = opts.host ?? '127.0.0.1';
  const ctx = opts.context ?? contextFromEnv();
  const httpPortText = String(opts.httpPort ?? 3000);
  const handler = echoHandler(ctx, httpPortText, opts.log);
  const h1 = http.createServer(handler);
  h1.keepAliveTimeout = 65_000;
  const ws = wsUpgradeHandler(opts.log);
  h1.on('upgrade', ws.onUpgrade);
  const h2c = h2cServer(handler);
  let tlsServer: http2.Http2SecureServer | undefined;
  if (opts.tlsCert && opts.tlsKey) {
    const ca = opts.tlsClientCa ? readFileSync(opts.tlsClientCa) : undefined;
    tlsServer = http2.createSecureServer(
      {
        cert: readFileSync(opts.tlsCert),
        key: readFileSync(opts.tlsKey),
        allowHTTP1: true,
        ...(ca ? { ca, requestCert: true, rejectUnauthorized: false } : {}),
      },
      handler,
    );
    tlsServer.on('upgrade', ws.onUpgrade);
  }
  const ports = {
    http: await listenOn(h1, host, opts.httpPort ?? 3000),
    h2c: await listenOn(h2c.front, host, opts.h2cPort ?? 3001),
    ...(tlsServer ? { https: await listenOn(tlsServer, host, opts.httpsPort ?? 8443) } : {}),
  };
  const closeOne = (s: net.Server) => new Promise<void>((r) => s.close(() => r()));
  return {
    ...ports,
    async close() {
      ws.closeAll();
      h1.closeAllConnections();
      h2c.closeAll();
      await Promise.all([closeOne(h1), closeOne(h2c.front), ...(tlsServer ? [closeOne(tlsServer)] : [])]);
    },
  };
}
