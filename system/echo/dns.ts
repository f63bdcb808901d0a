// The echo's stand-in for the coredns pod of Gateway API v1.6.1's conformance/base/manifests.yaml (the UDPRoute test's
// DNS backend, started with `-conf /root/Corefile`). Its Corefile serves zone foo.bar.com with the `whoami` plugin and
// forwards everything else to 8.8.8.8/9.9.9.9; this stand-in answers what the conformance test asks (an A query for
// foo.bar.com. must get a response) as whoami does (https://coredns.io/plugins/whoami/: NOERROR, empty answer section,
// the client's address as an A/AAAA record and its port as an SRV record `_<proto>.<qname>` in the additional
// section), and any other name with SERVFAIL, which is what coredns's forward answers when its upstreams cannot be
// reached (this machine has no network beyond the npm registry).
import { createSocket } from 'node:dgram';
import dnsPacket, { type Answer } from 'dns-packet';
import { bindUdp } from '../shared/listen.ts';

export const WHOAMI_ZONE = 'foo.bar.com';
const SERVFAIL = 2;

const inZone = (name: string) => {
  const n = name.replace(/\.$/, '').toLowerCase();
  return n === WHOAMI_ZONE || n.endsWith(`.${WHOAMI_ZONE}`);
};

/** The response to one DNS query from `client` (undefined: not DNS, dropped as servers do). */
export function answerQuery(msg: Buffer, client: { address: string; port: number }): Buffer | undefined {
  let query: dnsPacket.DecodedPacket;
  try {
    query = dnsPacket.decode(msg);
  } catch {
    return undefined;
  }
  const q = query.questions?.[0];
  const rd = (query.flags ?? 0) & dnsPacket.RECURSION_DESIRED;
  if (!q || !inZone(q.name)) {
    return dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: rd | SERVFAIL,
      questions: query.questions,
    });
  }
  const v6 = client.address.includes(':') && !client.address.startsWith('::ffff:');
  const address = client.address.replace(/^::ffff:/, '');
  const additionals: Answer[] = [
    { type: v6 ? 'AAAA' : 'A', name: q.name, ttl: 0, data: address },
    { type: 'SRV', name: `_udp.${q.name}`, ttl: 0, data: { priority: 0, weight: 0, port: client.port, target: '.' } },
  ];
  return dnsPacket.encode({
    type: 'response',
    id: query.id,
    flags: dnsPacket.AUTHORITATIVE_ANSWER | rd,
    questions: query.questions,
    answers: [],
    additionals,
  });
}

/** The stand-in on UDP `port` (coredns's 53). */
export async function startDnsStandin(o: { host: string; port: number; log?: (l: string) => void }) {
  const sock = createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    const out = answerQuery(msg, rinfo);
    if (!out) return;
    o.log?.(`[INFO] ${rinfo.address}:${rinfo.port} - ${msg.length} bytes answered`);
    sock.send(out, rinfo.port, rinfo.address);
  });
  const port = await bindUdp(sock, o.host, o.port);
  return { port, close: () => new Promise<void>((resolve) => sock.close(() => resolve())) };
}
