// pods/portforward in the three forms clients use:
// - WebSocket, subprotocol v4.channel.k8s.io (@kubernetes/client-node's PortForward): port i has data channel 2i and
//   error channel 2i+1, every message is [channel][payload], and the server's first message on each channel is the
//   port as 2 bytes little-endian;
// - SPDY/3.1 tunnelled in a WebSocket (subprotocol SPDY/3.1+portforward.k8s.io, kubectl 1.32's default);
// - SPDY/3.1 after an HTTP upgrade (kubectl with KUBECTL_PORT_FORWARD_WEBSOCKETS=false, and older kubectl).
// With SPDY, each local connection opens an error stream and a data stream (headers streamtype, port, requestid);
// the node connects to the pod's port once both exist and pipes the data stream both ways.
// Like containerd's portForward (pkg/cri/server/sandbox_portforward_linux.go), which enters the pod's network namespace
// and dials localhost:<port>, the node dials the pod loopback (lab/state.ts podLoopback): loopback-only listeners
// (the admin servers) and wildcard ones are reached, a listener bound to the pod IP alone is not.
import net from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import type { SubresourceRequest } from '../../apiserver/index.ts';
import type { Kubelet } from '../kubelet/kubelet.ts';
import { SpdySession, type SpdyStream } from './spdy.ts';
import { rejectUpgrade, upgradeOf } from './subresource-util.ts';

const WS_SPDY = 'SPDY/3.1+portforward.k8s.io';
/** `ws` accepts only RFC 7230 tokens as subprotocols, and '/' is not one: the offer is renamed for the handshake. */
const WS_SPDY_TOKEN = 'gwlab.spdy-3.1-portforward.k8s.io';
const CHANNEL_PROTOCOLS = [
  'v4.channel.k8s.io',
  'v5.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
  'channel.k8s.io',
];

function offered(req: { headers: Record<string, string | string[] | undefined> }): string[] {
  return String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Serves SPDY port-forward streams of one session against the pod. */
function servePortForwardSession(session: SpdySession, connect: (port: number) => net.Socket, podName: string): void {
  const pairs = new Map<string, { data?: SpdyStream; error?: SpdyStream; started?: boolean }>();
  session.on('error', () => undefined);
  session.on('stream', (s: SpdyStream) => {
    void s.reply();
    s.on('error', () => undefined);
    const type = s.headers.streamtype;
    const port = Number(s.headers.port);
    const key = `${s.headers.requestid ?? ''}/${port}`;
    let pair = pairs.get(key);
    if (!pair) {
      pair = {};
      pairs.set(key, pair);
    }
    if (type === 'data') pair.data = s;
    else if (type === 'error') pair.error = s;
    else {
      s.reset();
      return;
    }
    const { data, error } = pair;
    if (!data || !error || pair.started) return;
    pair.started = true;
    if (!Number.isInteger(port) || port <= 0 || port > 65535) {
      error.end(`invalid port ${s.headers.port}`);
      data.end();
      return;
    }
    const sock = connect(port);
    sock.on('connect', () => {
      data.pipe(sock);
      sock.pipe(data);
    });
    sock.on('error', (e) => {
      error.end(`error forwarding port ${port} to pod ${podName}: ${e.message}`);
      data.end();
    });
    sock.on('close', () => {
      if (!error.writableEnded) error.end();
      pairs.delete(key);
    });
    data.on('close', () => sock.destroy());
  });
}

function serveChannels(ws: WebSocket, ports: number[], connect: (port: number) => net.Socket, podName: string): void {
  const socks: net.Socket[] = [];
  const header = (ch: number, port: number) => {
    const b = Buffer.alloc(3);
    b[0] = ch;
    b.writeUInt16LE(port, 1);
    return b;
  };
  ports.forEach((port, i) => {
    ws.send(header(2 * i, port));
    ws.send(header(2 * i + 1, port));
    const sock = connect(port);
    socks.push(sock);
    sock.on('data', (d: Buffer) => ws.send(Buffer.concat([Buffer.of(2 * i), d])));
    sock.on('error', (e) => {
      ws.send(
        Buffer.concat([
          Buffer.of(2 * i + 1),
          Buffer.from(`error forwarding port ${port} to pod ${podName}: ${e.message}`),
        ]),
      );
    });
    sock.on('close', () => ws.close());
  });
  ws.on('message', (raw: Buffer, isBinary: boolean) => {
    const buf = isBinary ? raw : Buffer.from(raw);
    const ch = buf[0];
    if (ch === 255) return; // v5 close of a stream
    const sock = socks[ch >> 1];
    if (sock && ch % 2 === 0) sock.write(buf.subarray(1));
  });
  ws.on('close', () => {
    for (const s of socks) s.destroy();
  });
  ws.on('error', () => undefined);
}

/** How many port-forward connections each form served (diagnostics, and tests that check the form used). */
export interface PortForwardStats {
  websocketSpdy: number;
  websocketChannels: number;
  spdyUpgrade: number;
}

export function portForwardHandler(
  kubelet: Kubelet,
  stats: PortForwardStats = { websocketSpdy: 0, websocketChannels: 0, spdyUpgrade: 0 },
) {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (protocols) => {
      if (protocols.has(WS_SPDY_TOKEN)) return WS_SPDY;
      return CHANNEL_PROTOCOLS.find((p) => protocols.has(p)) ?? false;
    },
  });
  return async (r: SubresourceRequest): Promise<void> => {
    const pod = r.object as any;
    const name = pod.metadata.name;
    const ip: string | undefined = pod.status?.podIP;
    const up = upgradeOf(r);
    if (!up) return;
    const socket = up.socket;
    if (!ip || pod.status?.phase !== 'Running') {
      return rejectUpgrade(
        socket,
        400,
        'BadRequest',
        `unable to forward port: pod ${name} is not running (phase ${pod.status?.phase ?? 'Pending'})`,
      );
    }
    const lo = kubelet.podLoopback(ip);
    const connect = (port: number) => net.connect({ host: lo, port: kubelet.effectivePort(lo, port), noDelay: true });
    const upgrade = String(r.req.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'websocket') {
      const protocols = offered(r.req);
      const spdy = protocols.includes(WS_SPDY);
      const channel = CHANNEL_PROTOCOLS.some((p) => protocols.includes(p));
      if (!spdy && !channel) {
        return rejectUpgrade(
          socket,
          400,
          'BadRequest',
          `port-forward over WebSocket needs subprotocol ${WS_SPDY} or v4.channel.k8s.io`,
        );
      }
      const ports = r.query
        .getAll('ports')
        .flatMap((p) => p.split(','))
        .filter(Boolean)
        .map(Number);
      if (!spdy && (ports.length === 0 || ports.some((p) => !Number.isInteger(p) || p <= 0 || p > 65535))) {
        return rejectUpgrade(
          socket,
          400,
          'BadRequest',
          'query parameter "ports" is required: one or more ports 1-65535',
        );
      }
      r.req.headers['sec-websocket-protocol'] = protocols.map((p) => (p === WS_SPDY ? WS_SPDY_TOKEN : p)).join(', ');
      wss.handleUpgrade(r.req, socket, up.head, (ws) => {
        if (ws.protocol === WS_SPDY) {
          stats.websocketSpdy++;
          const session = new SpdySession({ write: (b) => ws.send(b), end: () => ws.close() });
          ws.on('message', (d: Buffer) => session.feed(Buffer.isBuffer(d) ? d : Buffer.from(d)));
          ws.on('close', () => session.close());
          ws.on('error', () => undefined);
          servePortForwardSession(session, connect, name);
        } else {
          stats.websocketChannels++;
          serveChannels(ws, ports, connect, name);
        }
      });
      return;
    }
    if (upgrade === 'spdy/3.1') {
      stats.spdyUpgrade++;
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n',
      );
      const session = new SpdySession({ write: (b) => socket.write(b), end: () => socket.end() });
      socket.on('data', (d: Buffer) => session.feed(d));
      socket.on('close', () => session.close());
      socket.on('end', () => socket.end());
      if (up.head.length) session.feed(up.head);
      servePortForwardSession(session, connect, name);
      return;
    }
    return rejectUpgrade(
      socket,
      400,
      'BadRequest',
      `unsupported upgrade ${JSON.stringify(r.req.headers.upgrade)}: use websocket or SPDY/3.1`,
    );
  };
}
