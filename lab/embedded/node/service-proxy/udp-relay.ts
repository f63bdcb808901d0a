// A UDP Service port of the service proxy (kube-proxy's role for `protocol: UDP`): a datagram socket on the
// ClusterIP (or LoadBalancer IP) and port; each client address gets a "connection" as kube-proxy's conntrack entry
// makes one: an upstream socket to one ready endpoint (round-robin when it begins), datagrams both ways, forgotten
// after 120 s without traffic (nf_conntrack_udp_timeout_stream's default) or when the relay closes. A datagram with
// no ready endpoint is dropped (kube-proxy's REJECT answers ICMP port unreachable, which a process cannot send).
import dgram from 'node:dgram';
import net from 'node:net';

export interface UdpEndpoint {
  ip: string;
  port: number;
}

interface Flow {
  up: dgram.Socket;
  timer: NodeJS.Timeout;
}

export class UdpRelay {
  private socket: dgram.Socket | undefined;
  private readonly flows = new Map<string, Flow>();
  private readonly pick: () => UdpEndpoint | undefined;
  private readonly idleMs: number;

  constructor(pick: () => UdpEndpoint | undefined, idleMs = 120_000) {
    this.pick = pick;
    this.idleMs = idleMs;
  }

  /** Binds ip:port; resolves with the bind error, if any. */
  listen(ip: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
    const socket = dgram.createSocket({ type: net.isIPv6(ip) ? 'udp6' : 'udp4' });
    return new Promise((resolve) => {
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err));
      socket.bind({ address: ip, port, exclusive: true }, () => {
        socket.removeAllListeners('error');
        socket.on('error', () => undefined);
        socket.on('message', (msg, from) => this.onDatagram(socket, msg, from));
        this.socket = socket;
        resolve(undefined);
      });
    });
  }

  private onDatagram(socket: dgram.Socket, msg: Buffer, from: dgram.RemoteInfo): void {
    const key = `${from.address}:${from.port}`;
    let flow = this.flows.get(key);
    if (!flow) {
      const ep = this.pick();
      if (!ep) return;
      const up = dgram.createSocket(net.isIPv6(ep.ip) ? 'udp6' : 'udp4');
      up.on('error', () => undefined);
      up.connect(ep.port, ep.ip);
      up.on('message', (reply) => {
        this.flows.get(key)?.timer.refresh();
        socket.send(reply, from.port, from.address);
      });
      const timer = setTimeout(() => this.forget(key), this.idleMs);
      timer.unref();
      flow = { up, timer };
      this.flows.set(key, flow);
      const f = flow;
      up.once('connect', () => f.up.send(msg));
      return;
    }
    flow.timer.refresh();
    try {
      flow.up.send(msg);
    } catch {
      // Not connected yet: the first datagram is sent on connect; later ones before it are dropped, as UDP may.
    }
  }

  private forget(key: string): void {
    const f = this.flows.get(key);
    if (!f) return;
    this.flows.delete(key);
    clearTimeout(f.timer);
    f.up.close();
  }

  close(): Promise<void> {
    for (const k of [...this.flows.keys()]) this.forget(k);
    const s = this.socket;
    this.socket = undefined;
    if (!s) return Promise.resolve();
    return new Promise((r) => s.close(() => r()));
  }
}
