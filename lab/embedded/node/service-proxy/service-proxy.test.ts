import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressPlan, claimLabIndex } from '../../../state.ts';
import { AddressPool } from '../../ipam.ts';
import { type BindEvent, type EndpointAddress, ServiceProxy } from './service-proxy.ts';

/** Connects, reads everything the server says (after sending `send` and half-closing), resolves with it. */
function talk(host: string, port: number, send = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port }, () => s.end(send));
    let d = '';
    s.setEncoding('utf8');
    s.on('data', (c) => (d += c));
    s.on('end', () => resolve(d));
    s.on('error', reject);
  });
}

describe('service proxy', () => {
  let release: () => Promise<void>;
  let pods: AddressPool;
  let svcs: AddressPool;
  let lbs: AddressPool;
  const backends: net.Server[] = [];
  const eps: Record<string, EndpointAddress> = {};
  const proxies: ServiceProxy[] = [];

  beforeAll(async () => {
    const claim = await claimLabIndex();
    release = claim.release;
    const plan = addressPlan(claim.index);
    pods = new AddressPool(plan.podOctet);
    svcs = new AddressPool(plan.serviceOctet);
    lbs = new AddressPool(plan.lbOctet);
    // Three "pods": each says its name; after the client half-closes, how many bytes it got.
    for (const id of ['a', 'b', 'c']) {
      const ip = pods.allocate();
      const srv = net.createServer({ allowHalfOpen: true }, (s) => {
        let n = 0;
        s.on('data', (c) => (n += c.length));
        s.on('end', () => s.end(`${id}:${n}`));
        s.on('error', () => undefined);
      });
      await new Promise<void>((r) => srv.listen(8080, ip, r));
      backends.push(srv);
      eps[id] = { ip, port: 8080 };
    }
  });

  afterAll(async () => {
    for (const p of proxies) await p.stop();
    for (const b of backends) await new Promise((r) => b.close(r));
    await release?.();
  });

  const newProxy = (opts: ConstructorParameters<typeof ServiceProxy>[0] = {}) => {
    const p = new ServiceProxy(opts);
    proxies.push(p);
    return p;
  };

  it('balances round-robin over the ready endpoints and follows endpoint changes', async () => {
    const proxy = newProxy();
    const ip = svcs.allocate();
    const spec = { namespace: 'ns', name: 'web', clusterIP: ip, ports: [{ name: 'http', port: 80 }] };
    const bindings = await proxy.apply({ ...spec, endpoints: { http: [eps.a, eps.b, eps.c] } });
    expect(bindings).toEqual([{ kind: 'clusterIP', ip, port: 80, boundPort: 80, fallback: false }]);
    const seq: string[] = [];
    for (let i = 0; i < 6; i++) seq.push((await talk(ip, 80)).split(':')[0]);
    expect(seq).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);

    await proxy.apply({ ...spec, endpoints: { http: [eps.a, eps.c] } });
    const after: string[] = [];
    for (let i = 0; i < 4; i++) after.push((await talk(ip, 80)).split(':')[0]);
    expect(after.sort()).toEqual(['a', 'a', 'c', 'c']);

    // An endpoint that refuses is skipped for the next one.
    await proxy.apply({ ...spec, endpoints: { http: [{ ip: eps.b.ip, port: 1 }, eps.b] } });
    for (let i = 0; i < 3; i++) expect((await talk(ip, 80)).split(':')[0]).toBe('b');

    // No ready endpoint: the connection is refused/reset.
    await proxy.apply({ ...spec, endpoints: { http: [] } });
    await expect(talk(ip, 80)).rejects.toThrow(/ECONNRESET|ECONNREFUSED/);

    await proxy.remove('ns', 'web');
    await expect(talk(ip, 80)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('relays half-closed streams completely', async () => {
    const proxy = newProxy();
    const ip = svcs.allocate();
    await proxy.apply({
      namespace: 'ns',
      name: 'hc',
      clusterIP: ip,
      ports: [{ name: '', port: 8000 }],
      endpoints: { '': [eps.c] },
    });
    const payload = 'x'.repeat(3 * 1024 * 1024);
    expect(await talk(ip, 8000, payload)).toBe(`c:${payload.length}`);
  });

  it('serves LoadBalancer ports, falling back to p+8000 when forced or when the port is taken, and reports it', async () => {
    const forced = newProxy({ forceLbPortFallback: true });
    const events: BindEvent[] = [];
    forced.on('bind', (e) => events.push(e));
    const lb = lbs.allocate();
    const cip = svcs.allocate();
    await forced.apply({
      namespace: 'gw',
      name: 'gateway',
      clusterIP: cip,
      loadBalancerIP: lb,
      ports: [{ name: 'http', port: 80 }],
      endpoints: { http: [eps.a] },
    });
    expect(events.find((e) => e.kind === 'loadBalancer')).toEqual({
      namespace: 'gw',
      name: 'gateway',
      kind: 'loadBalancer',
      ip: lb,
      port: 80,
      boundPort: 8080,
      fallback: true,
      reason: 'Forced',
    });
    expect((await talk(lb, 8080)).split(':')[0]).toBe('a');
    expect((await talk(cip, 80)).split(':')[0]).toBe('a');

    // The port is held by someone else: EADDRINUSE → fallback.
    const lb2 = lbs.allocate();
    const squatter = net.createServer();
    await new Promise<void>((r) => squatter.listen(9090, lb2, r));
    const proxy = newProxy();
    const evs: BindEvent[] = [];
    proxy.on('bind', (e) => evs.push(e));
    const b = await proxy.apply({
      namespace: 'gw',
      name: 'g2',
      loadBalancerIP: lb2,
      ports: [{ name: 'x', port: 9090 }],
      endpoints: { x: [eps.b] },
    });
    await new Promise((r) => squatter.close(r));
    expect(b).toEqual([{ kind: 'loadBalancer', ip: lb2, port: 9090, boundPort: 17090, fallback: true }]);
    expect(evs[0]).toMatchObject({ fallback: true, reason: 'EADDRINUSE' });
    expect((await talk(lb2, 17090)).split(':')[0]).toBe('b');
  });

  it('shifts ClusterIP ports below 1024 in an unprivileged lab', async () => {
    const proxy = newProxy({ lowPortShift: { below: 1024, offset: 8000 } });
    const ip = svcs.allocate();
    const b = await proxy.apply({
      namespace: 'ns',
      name: 'low',
      clusterIP: ip,
      ports: [
        { name: 'http', port: 80 },
        { name: 'alt', port: 8081 },
      ],
      endpoints: { http: [eps.a], alt: [eps.b] },
    });
    expect(b.map((x) => [x.port, x.boundPort])).toEqual([
      [80, 8080],
      [8081, 8081],
    ]);
    expect((await talk(ip, 8080)).split(':')[0]).toBe('a');
    expect((await talk(ip, 8081)).split(':')[0]).toBe('b');
  });

  it('relays UDP ports (ClusterIP and LoadBalancer) per client address, beside a TCP port of the same number', async () => {
    // Two UDP "pods" answering `<id>:<datagram>`.
    const udpPods: dgram.Socket[] = [];
    const udpEps: EndpointAddress[] = [];
    for (const id of ['u1', 'u2']) {
      const ip = pods.allocate();
      const sock = dgram.createSocket('udp4');
      sock.on('message', (m, r) => sock.send(`${id}:${m}`, r.port, r.address));
      await new Promise<void>((r) => sock.bind(5353, ip, r));
      udpPods.push(sock);
      udpEps.push({ ip, port: 5353 });
    }
    const ask = (host: string, port: number, client: dgram.Socket, text: string) =>
      new Promise<string>((resolve) => {
        client.once('message', (m) => resolve(m.toString()));
        client.send(text, port, host);
      });
    const proxy = newProxy();
    const cip = svcs.allocate();
    const lb = lbs.allocate();
    const b = await proxy.apply({
      namespace: 'ns',
      name: 'dns',
      clusterIP: cip,
      loadBalancerIP: lb,
      ports: [
        { name: 'dns-udp', port: 5300, protocol: 'UDP' },
        { name: 'dns-tcp', port: 5300, protocol: 'TCP' },
      ],
      endpoints: { 'dns-udp': udpEps, 'dns-tcp': [eps.a] },
    });
    expect(b.map((x) => [x.kind, x.port, x.boundPort]).sort()).toEqual([
      ['clusterIP', 5300, 5300],
      ['clusterIP', 5300, 5300],
      ['loadBalancer', 5300, 5300],
      ['loadBalancer', 5300, 5300],
    ]);
    const c1 = dgram.createSocket('udp4');
    const c2 = dgram.createSocket('udp4');
    try {
      // One client keeps its endpoint; the next client gets the next endpoint (round-robin per flow).
      expect(await ask(cip, 5300, c1, 'q1')).toBe('u1:q1');
      expect(await ask(cip, 5300, c1, 'q2')).toBe('u1:q2');
      expect(await ask(cip, 5300, c2, 'q3')).toBe('u2:q3');
      expect(await ask(lb, 5300, c2, 'q4')).toMatch(/^u[12]:q4$/);
      expect((await talk(cip, 5300)).split(':')[0]).toBe('a');
    } finally {
      c1.close();
      c2.close();
      await proxy.remove('ns', 'dns');
      for (const s of udpPods) s.close();
    }
  });
});
