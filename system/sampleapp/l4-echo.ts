// The sample application's TCP and UDP echo servers (for TCPRoute and UDPRoute): TCP echoes every byte and, once the
// client half-closes, sends "\n<name>" and closes (so a client sees both directions, the half-close and which pod
// answered); UDP answers each datagram with "<name>:<datagram>" to its sender.
import dgram from 'node:dgram';
import net from 'node:net';
import { bindUdp, listenOn } from '../shared/listen.ts';

export interface L4Echo {
  tcpPort?: number;
  udpPort?: number;
  close(): Promise<void>;
}

export async function startL4Echo(o: {
  host: string;
  tcpPort?: number;
  udpPort?: number;
  name: string;
}): Promise<L4Echo> {
  let tcp: net.Server | undefined;
  let udp: dgram.Socket | undefined;
  const out: L4Echo = {
    async close() {
      await Promise.all([
        tcp && new Promise<void>((r) => tcp!.close(() => r())),
        udp && new Promise<void>((r) => udp!.close(() => r())),
      ]);
    },
  };
  if (o.tcpPort !== undefined) {
    const server = net.createServer({ allowHalfOpen: true }, (c) => {
      c.on('error', () => undefined);
      c.pipe(c, { end: false });
      c.on('end', () => c.end(`\n${o.name}`));
    });
    out.tcpPort = await listenOn(server, o.host, o.tcpPort);
    tcp = server;
  }
  if (o.udpPort !== undefined) {
    const sock = dgram.createSocket(net.isIPv6(o.host) ? 'udp6' : 'udp4');
    sock.on('message', (m, r) => sock.send(`${o.name}:${m.toString()}`, r.port, r.address));
    out.udpPort = await bindUdp(sock, o.host, o.udpPort);
    udp = sock;
  }
  return out;
}
