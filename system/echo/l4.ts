// The echo backend's TCP and UDP modes, as upstream's echo-basic image serves them when TCP_ECHO_SERVER or
// UDP_ECHO_SERVER is set (Gateway API v1.6.1 conformance/echo-basic/tcpserver/tcpserver.go,
// udpechoserver/udpechoserver.go): the backends of the GATEWAY-TCP and GATEWAY-UDP conformance tests.
// TCP: on connect the welcome line, then per line "TEST" -> the JSON assertions (pod context, isTLS), "IS_TLS" ->
// true/false, "PING" -> PONG; other lines are ignored. (Upstream's optional TLS listener, TLS_PORT with
// TLS_SERVER_CERT/TLS_SERVER_PRIV_KEY, is for the TLSRoute tests: not served here.)
// UDP: every datagram (up to 1024 bytes read, as upstream's buffer) answered with {request, namespace, ingress,
// service, pod} to its sender.
import { createSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

export const WELCOME_MESSAGE = 'Gateway API Test TCP Server\n';

export interface PodContext {
  namespace: string;
  ingress: string;
  service: string;
  pod: string;
}

export function podContextFromEnv(env: NodeJS.ProcessEnv): PodContext {
  return {
    namespace: env.NAMESPACE ?? '',
    ingress: env.INGRESS_NAME ?? '',
    service: env.SERVICE_NAME ?? '',
    pod: env.POD_NAME ?? '',
  };
}

export interface L4Echo {
  port: number;
  close: () => Promise<void>;
}

function listening(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : port);
    });
  });
}

/** Upstream's tcpserver handleConnection for a plain TCP connection. */
function handleTcp(conn: Socket, ctx: PodContext, tcpPort: number): void {
  conn.on('error', () => conn.destroy());
  // Field order as upstream's JSON (Context inline, then isTLS); tlsport as its default when TLS is not configured.
  const payload = JSON.stringify({ ...ctx, tcpport: String(tcpPort), tlsport: '8443', isTLS: false });
  conn.write(WELCOME_MESSAGE);
  const lines = createInterface({ input: conn, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (text) => {
    if (conn.destroyed) return;
    if (text === 'TEST') conn.write(`${payload}\n`);
    else if (text === 'IS_TLS') conn.write('false\n');
    else if (text === 'PING') conn.write('PONG\n');
  });
  lines.on('close', () => conn.end());
}

export async function startTcpEcho(o: { host: string; port: number; context: PodContext }): Promise<L4Echo> {
  const sockets = new Set<Socket>();
  const server = createServer((c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
    handleTcp(c, o.context, port);
  });
  const port = await listening(server, o.host, o.port);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export async function startUdpEcho(o: {
  host: string;
  port: number;
  context: PodContext;
  log?: (line: string) => void;
}): Promise<L4Echo> {
  const sock = createSocket(o.host.includes(':') ? 'udp6' : 'udp4');
  sock.on('message', (msg, rinfo) => {
    const request = msg.subarray(0, 1024).toString('utf8');
    o.log?.(`Received UDP ${request} from ${rinfo.address}:${rinfo.port}`);
    const body = JSON.stringify({ request, ...o.context });
    sock.send(body, rinfo.port, rinfo.address);
  });
  const port = await new Promise<number>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(o.port, o.host, () => {
      sock.off('error', reject);
      resolve(sock.address().port);
    });
  });
  return { port, close: () => new Promise<void>((resolve) => sock.close(() => resolve())) };
}
