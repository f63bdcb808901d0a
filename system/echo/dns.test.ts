// The coredns stand-in (dns.ts) against coredns's whoami plugin (https://coredns.io/plugins/whoami/) for the zone of
// Gateway API v1.6.1's conformance Corefile, and SERVFAIL (coredns forward with unreachable upstreams) elsewhere.
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerQuery, startDnsStandin } from './dns.ts';

const rcode = (r: dnsPacket.DecodedPacket) => (r.flags ?? 0) & 0xf; // 0 NOERROR, 2 SERVFAIL (RFC 1035 4.1.1)

const query = (name: string, id = 7) =>
  dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] });

describe('coredns stand-in', () => {
  it('answers foo.bar.com as whoami: NOERROR, authoritative, the client address and port in the additional section', () => {
    const r = dnsPacket.decode(answerQuery(query('foo.bar.com.'), { address: '10.1.2.3', port: 4567 })!);
    expect(r.id).toBe(7);
    expect(r.type).toBe('response');
    expect(rcode(r)).toBe(0);
    expect(r.flag_aa).toBe(true);
    expect(r.answers).toEqual([]);
    expect(r.additionals?.map((a) => [a.type, a.name, (a as { data: unknown }).data])).toEqual([
      ['A', 'foo.bar.com', '10.1.2.3'],
      ['SRV', '_udp.foo.bar.com', { priority: 0, weight: 0, port: 4567, target: '.' }],
    ]);
  });

  it('answers other names with SERVFAIL and drops what is not DNS', () => {
    const r = dnsPacket.decode(answerQuery(query('example.com.'), { address: '10.1.2.3', port: 1 })!);
    expect(rcode(r)).toBe(2);
    expect(answerQuery(Buffer.from('hello'), { address: '10.1.2.3', port: 1 })).toBeUndefined();
  });

  describe('over UDP', () => {
    let dns: Awaited<ReturnType<typeof startDnsStandin>>;
    beforeAll(async () => {
      dns = await startDnsStandin({ host: '127.0.0.1', port: 0 });
    });
    afterAll(() => dns.close());
    it('replies to the sender', async () => {
      const sock = createSocket('udp4');
      try {
        const reply = new Promise<Buffer>((resolve) => sock.once('message', resolve));
        sock.send(query('foo.bar.com.', 42), dns.port, '127.0.0.1');
        const r = dnsPacket.decode(await reply);
        expect([r.id, rcode(r)]).toEqual([42, 0]);
      } finally {
        sock.close();
      }
    });
  });
});
