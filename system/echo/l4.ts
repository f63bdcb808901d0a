// The echo backend's TCP and UDP modes, as upstream's echo-basic image serves them when TCP_ECHO_SERVER or
// UDP_ECHO_SERVER is set (Gateway API v1.6.1 conformance/echo-basic/tcpserver/tcpserver.go,
// udpechoserver/udpechoserver.go): the backends of the GATEWAY-TCP and GATEWAY-UDP conformance tests.
// TCP: on connect the welcome line, then per line "TEST" -> the JSON assertions (pod context, isTLS), "IS_TLS" ->
// true/false, "PING" -> PONG; other lines are ignored. With TLS_SERVER_CERT and TLS_SERVER_PRIV_KEY (files), the same
// over TLS on TLS_PORT (8443), its TEST payload with isTLS true and the `tls` assertions (version, serverName: the SNI
// the client sent, negotiatedProtocol, curves, cipherSuite, in Go's crypto/tls names): the backend of the TLSRoute
// tests (tcp-backend in the base manifests).
// UDP: every datagram (up to 1024 bytes read, as upstream's buffer) answered with {request, namespace, ingress,
// service, pod} to its sender.
import { createSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import tls from 'node:tls';
import { bindUdp, listenOn } from '../shared/listen.ts';
import type { EchoContext } from './response.ts';

export const WELCOME_MESSAGE = 'Gateway API Test TCP Server\n';

export interface L4Echo {
  port: number;
  close: () => Promise<void>;
}

/** Go's tls.VersionName. */
const GO_VERSION: Record<string, string> = {
  TLSv1: 'TLS 1.0',
  'TLSv1.1': 'TLS 1.1',
  'TLSv1.2': 'TLS 1.2',
  'TLSv1.3': 'TLS 1.3',
};

/** Upstream's TLSAssertions of a TLS connection (field order and omitempty as its JSON tags). */
function tlsAssertions(c: tls.TLSSocket): Record<string, string> {
  const protocol = c.alpnProtocol || '';
  const curve = c.getEphemeralKeyInfo() as { name?: string } | null;
  return {
    version: GO_VERSION[c.getProtocol() ?? ''] ?? String(c.getProtocol()),
    serverName: (c as tls.TLSSocket & { servername?: string | false }).servername || '',
    ...(protocol ? { negotiatedProtocol: protocol } : {}),
    ...(curve?.name ? { curves: curve.name } : {}),
    cipherSuite: c.getCipher().standardName,
  };
}

/** Upstream's tcpserver handleConnection (plain TCP, or TLS once the handshake is done). */
function handleTcp(conn: Socket, ctx: EchoContext, ports: { tcp: number; tls: number }): void {
  conn.on('error', () => conn.destroy());
  const isTLS = conn instanceof tls.TLSSocket;
  // Field order as upstream's JSON (Context inline, then isTLS, then tls); tlsport as its default when TLS is not
  // configured.
  const payload = JSON.stringify({
    ...ctx,
    tcpport: String(ports.tcp),
    tlsport: String(ports.tls),
    isTLS,
    ...(isTLS ? { tls: tlsAssertions(conn as tls.TLSSocket) } : {}),
  });
  conn.write(WELCOME_MESSAGE);
  const lines = createInterface({ input: conn, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (text) => {
    if (conn.destroyed) return;
    if (text === 'TEST') conn.write(`${payload}\n`);
    else if (text === 'IS_TLS') conn.write(`${isTLS}\n`);
    else if (text === 'PING') conn.write('PONG\n');
  });
  lines.on('close', () => conn.end());
}

export async function startTcpEcho(o: {
  host: string;
  port: number;
  context: EchoContext;
  /** TLS_SERVER_CERT and TLS_SERVER_PRIV_KEY's contents, and TLS_PORT: the same echo over TLS. */
  tls?: { cert: Buffer; key: Buffer; port: number };
}): Promise<L4Echo & { tlsPort?: number }> {
  const sockets = new Set<Socket>();
  const track = (c: Socket) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  };
  const ports = { tcp: o.port, tls: o.tls?.port ?? 8443 };
  const server = createServer((c) => {
    track(c);
    handleTcp(c, o.context, ports);
  });
  ports.tcp = await listenOn(server, o.host, o.port);
  let tlsServer: tls.Server | undefined;
  if (o.tls) {
    tlsServer = tls.createServer({ cert: o.tls.cert, key: o.tls.key }, (c) => {
      track(c);
      handleTcp(c, o.context, ports);
    });
    // A failed handshake: upstream logs it and closes the connection.
    tlsServer.on('tlsClientError', (_e, c) => c.destroy());
    ports.tls = await listenOn(tlsServer, o.host, o.tls.port);
  }
  const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
  return {
    port: ports.tcp,
    ...(tlsServer ? { tlsPort: ports.tls } : {}),
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([close(server), ...(tlsServer ? [close(tlsServer)] : [])]);
    },
  };
}

export async function startUdpEcho(o: {
  host: string;
  port: number;
  context: EchoContext;
  log?: (line: string) => void;
}): Promise<L4Echo> {
  const sock = createSocket(o.host.includes(':') ? 'udp6' : 'udp4');
  sock.on('message', (msg, rinfo) => {
    const request = msg.subarray(0, 1024).toString('utf8');
    o.log?.(`Received UDP ${request} from ${rinfo.address}:${rinfo.port}`);
    const body = JSON.stringify({ request, ...o.context });
    sock.send(body, rinfo.port, rinfo.address);
  });
  const port = await bindUdp(sock, o.host, o.port);
  return { port, close: () => new Promise<void>((resolve) => sock.close(() => resolve())) };
}
