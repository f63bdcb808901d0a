// TCP requests as upstream's conformance/utils/tcp/tcp.go (Gateway API v1.6.1): MakeTCPRequestAndExpectEventually-
// ValidResponse (a new connection per try, 1 s apart, for MaxTimeToConsistency: the echo's welcome line, PING ->
// PONG, IS_TLS, then TEST's JSON with the namespace and a pod named `<backend>-...`) and EchoSendOnce (one
// connection, TEST, the pod name). Plain TCP only: the TLS dialer is the TLSRoute tests' (not ported).
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TimeoutConfig } from './config.ts';

/** upstream echo-basic tcpserver.WelcomeMessage */
export const WELCOME_MESSAGE = 'Gateway API Test TCP Server\n';

export interface TcpExpectedResponse {
  backendIsTLS?: boolean;
  backend: string;
  namespace: string;
}

interface TcpAssertions {
  namespace?: string;
  pod?: string;
  isTLS?: boolean;
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

  static open(addr: string, timeoutMs: number): Promise<LineConn> {
    const { host, port } = splitAddr(addr);
    return new Promise((resolve, reject) => {
      const sock = connect({ host, port });
      sock.setTimeout(timeoutMs, () => sock.destroy(new Error(`i/o timeout after ${timeoutMs} ms`)));
      sock.once('error', reject);
      sock.once('connect', () => {
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
async function tryTcp(addr: string, expected: TcpExpectedResponse, timeoutMs: number): Promise<string | undefined> {
  let c: LineConn;
  try {
    c = await LineConn.open(addr, timeoutMs);
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
    return undefined;
  } catch (err) {
    return `an error occurred during assertion: ${(err as Error).message}`;
  } finally {
    c.close();
  }
}

/** Upstream's MakeTCPRequestAndExpectEventuallyValidResponse (plain TCP). */
export async function makeTCPRequestAndExpectEventuallyValidResponse(
  tc: TimeoutConfig,
  gwAddr: string,
  expected: TcpExpectedResponse,
): Promise<void> {
  const deadline = Date.now() + tc.maxTimeToConsistency;
  let last: string | undefined;
  for (;;) {
    last = await tryTcp(gwAddr, expected, tc.requestTimeout);
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
