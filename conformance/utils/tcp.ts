// TCP requests as upstream's conformance/utils/tcp/tcp.go (Gateway API v1.6.1): MakeTCPRequestAndExpectEventually-
// ValidResponse (a new connection per try, 1 s apart, for MaxTimeToConsistency: the echo's welcome line, PING ->
// PONG, IS_TLS, then TEST's JSON with the namespace and a pod named `<backend>-...`) and EchoSendOnce (one
// connection, TEST, the pod name). With `tls` (the TLSRoute tests), the dialer is upstream's tls.Dialer: the server
// name sent as SNI and verified against the CA given (Go's crypto/x509 hostname rules: roundtrip.ts), TLS 1.2 at least;
// the payload's tls.serverName is then checked against `hostname` when one is expected.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';
import type { TimeoutConfig } from './config.ts';
import { checkServerIdentity } from './roundtrip.ts';

/** upstream echo-basic tcpserver.WelcomeMessage */
export const WELCOME_MESSAGE = 'Gateway API Test TCP Server\n';

export interface TcpExpectedResponse {
  backendIsTLS?: boolean;
  backend: string;
  namespace: string;
  /** The SNI the backend saw (its TLS assertions' serverName); checked when set. */
  hostname?: string;
}

/** The client's TLS: the server name (SNI, verified) and the CA (PEM) the server's certificate must chain to. */
export interface TcpTls {
  serverName: string;
  serverCertificate?: string;
}

interface TcpAssertions {
  namespace?: string;
  pod?: string;
  isTLS?: boolean;
  tls?: { serverName?: string };
}

/** `host:port` (IPv6 in brackets) → its parts. */
function splitAddr(addr: string): { host: string; port: number } {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(addr);
  if (!m) throw new Error(`not a host:port address: ${addr}`);
  return { host: m[1], port: Number(m[2]) };
}

/** One connection with line reads and a deadline over all of it. */
class LineConn {
  private buf = '';
  private waiters: (() => void)[] = [];
  private ended: Error | undefined;
  private readonly sock: Socket;
  private constructor(sock: Socket) {
    this.sock = sock;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      this.buf += d;
      this.wake();
    });
    sock.on('error', (e) => this.end(e));
    sock.on('close', () => this.end(new Error('EOF')));
  }

  static open(addr: string, timeoutMs: number, t?: TcpTls): Promise<LineConn> {
    const { host, port } = splitAddr(addr);
    return new Promise((resolve, reject) => {
      const sock = t
        ? tls.connect({
            host,
            port,
            servername: t.serverName,
            minVersion: 'TLSv1.2',
            ...(t.serverCertificate ? { ca: t.serverCertificate, allowPartialTrustChain: true } : {}),
            checkServerIdentity: (_h, cert) => checkServerIdentity(t.serverName, cert),
          })
        : connect({ host, port });
      sock.setTimeout(timeoutMs, () => sock.destroy(new Error(`i/o timeout after ${timeoutMs} ms`)));
      sock.once('error', reject);
      sock.once(t ? 'secureConnect' : 'connect', () => {
        sock.off('error', reject);
        resolve(new LineConn(sock));
      });
    });
  }

  private end(e: Error): void {
    this.ended ??= e;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  async readLine(): Promise<string> {
    for (;;) {
      const i = this.buf.indexOf('\n');
      if (i >= 0) {
        const line = this.buf.slice(0, i + 1);
        this.buf = this.buf.slice(i + 1);
        return line;
      }
      if (this.ended) throw this.ended;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  write(s: string): void {
    this.sock.write(s);
  }

  close(): void {
    this.sock.destroy();
  }
}

/** One try of WaitForValidTCPResponse: undefined when every step and assertion held, else what did not. */
async function tryTcp(
  addr: string,
  expected: TcpExpectedResponse,
  timeoutMs: number,
  t?: TcpTls,
): Promise<string | undefined> {
  let c: LineConn;
  try {
    c = await LineConn.open(addr, timeoutMs, t);
  } catch (err) {
    return `client could not connect: ${(err as Error).message}`;
  }
  try {
    const welcome = await c.readLine();
    if (welcome !== WELCOME_MESSAGE) return `TCPServer welcome message does not match: ${JSON.stringify(welcome)}`;
    c.write('PING\n');
    const pong = await c.readLine();
    if (pong !== 'PONG\n') return `expected PONG, got ${JSON.stringify(pong)}`;
    c.write('IS_TLS\n');
    const isTls = (await c.readLine()).replace(/\n$/, '');
    if (isTls !== String(!!expected.backendIsTLS)) return `expected IS_TLS ${!!expected.backendIsTLS}, got ${isTls}`;
    c.write('TEST\n');
    const payload = JSON.parse(await c.readLine()) as TcpAssertions;
    if (payload.namespace !== expected.namespace)
      return `namespace does not match: expected ${expected.namespace}, got ${payload.namespace}`;
    if (!(payload.pod ?? '').startsWith(`${expected.backend}-`))
      return `backend name does not match with pod prefix. pod=${payload.pod} and backend=${expected.backend}`;
    if (expected.hostname && payload.tls?.serverName !== expected.hostname)
      return `SNI seen by the backend does not match: expected ${expected.hostname}, got ${payload.tls?.serverName}`;
    return undefined;
  } catch (err) {
    return `an error occurred during assertion: ${(err as Error).message}`;
  } finally {
    c.close();
  }
}

/** Upstream's MakeTCPRequestAndExpectEventuallyValidResponse (plain TCP, or TLS with `t`). */
export async function makeTCPRequestAndExpectEventuallyValidResponse(
  tc: TimeoutConfig,
  gwAddr: string,
  expected: TcpExpectedResponse,
  t?: TcpTls,
): Promise<void> {
  const deadline = Date.now() + tc.maxTimeToConsistency;
  let last: string | undefined;
  for (;;) {
    last = await tryTcp(gwAddr, expected, tc.requestTimeout, t);
    if (!last) return;
    if (Date.now() >= deadline) break;
    await sleep(1000);
  }
  throw new Error(`TCP request to ${gwAddr} never gave a valid response within ${tc.maxTimeToConsistency} ms: ${last}`);
}

/** Upstream's EchoSendOnce: the pod that answered TEST on one new connection. */
export async function echoSendOnce(gwAddr: string, timeoutMs: number): Promise<string> {
  const c = await LineConn.open(gwAddr, timeoutMs);
  try {
    const welcome = await c.readLine();
    if (welcome !== WELCOME_MESSAGE) throw new Error(`unexpected TCP welcome message: ${JSON.stringify(welcome)}`);
    c.write('TEST\n');
    const payload = JSON.parse(await c.readLine()) as TcpAssertions;
    if (!payload.pod) throw new Error('TCP TEST response has no pod');
    return payload.pod;
  } finally {
    c.close();
  }
}

/** Upstream's ExpectAddressBeAvailable: a TCP connection to the address opens within the timeout (polled). */
export async function expectAddressBeAvailable(intervalMs: number, timeoutMs: number, address: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      (await LineConn.open(address, intervalMs)).close();
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() >= deadline)
      throw new Error(`failed waiting for TCP connection to ${address} after ${timeoutMs} ms: ${last}`);
    await sleep(intervalMs);
  }
}

/**
 * Upstream's tls.MakeTLSConnectionAndExpectEventuallyConnectionRejection (utils/tls/tls.go): a TLS handshake with
 * that SNI (no CA: the handshake itself must not complete), tried each second until the connection is reset or closed
 * by the peer (EOF), for MaxTimeToConsistency. A handshake that completes, or fails for another reason (a certificate
 * the client cannot verify), is not a rejection: tried again.
 */
export async function makeTLSConnectionAndExpectEventuallyConnectionRejection(
  tc: TimeoutConfig,
  gwAddr: string,
  serverName: string,
): Promise<void> {
  const { host, port } = splitAddr(gwAddr);
  const deadline = Date.now() + tc.maxTimeToConsistency;
  let last = '';
  for (;;) {
    last = await new Promise<string>((resolve) => {
      const s = tls.connect({ host, port, servername: serverName, minVersion: 'TLSv1.2' });
      s.setTimeout(tc.requestTimeout, () => s.destroy(new Error('i/o timeout')));
      s.once('secureConnect', () => {
        s.destroy();
        resolve('client could connect');
      });
      s.once('error', (e: NodeJS.ErrnoException) => {
        s.destroy();
        // Node reports a close or reset before the handshake ends as ECONNRESET ("socket disconnected before secure
        // TLS connection was established"): Go's io.EOF or ECONNRESET.
        resolve(e.code === 'ECONNRESET' || e.code === 'EPIPE' ? '' : `client could not connect: ${e.message}`);
      });
    });
    if (!last) return;
    if (Date.now() >= deadline) break;
    await sleep(1000);
  }
  throw new Error(`TLS connection to ${gwAddr} (SNI ${serverName}) was never rejected: ${last}`);
}
