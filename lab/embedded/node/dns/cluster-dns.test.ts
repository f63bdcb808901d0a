import dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressPlan, claimLabIndex } from '../../../state.ts';
import { wellKnownServiceIPs } from '../../ipam.ts';
import { ClusterDns } from './cluster-dns.ts';

describe('cluster DNS server', () => {
  let release: () => Promise<void>;
  let server: ClusterDns;
  let fallback: ClusterDns;
  const resolver = new dns.promises.Resolver({ timeout: 500, tries: 1 });
  let svcIP: string;

  beforeAll(async () => {
    const claim = await claimLabIndex();
    release = claim.release;
    const plan = addressPlan(claim.index);
    const addr = wellKnownServiceIPs(plan).dns;
    svcIP = `127.${plan.serviceOctet}.0.20`;
    server = new ClusterDns({ address: addr });
    const ep = await server.start();
    resolver.setServers([`${ep.address}:${ep.port}`]);
    server.setServices([
      {
        namespace: 'sampleapp',
        name: 'sampleapp',
        clusterIP: svcIP,
        ports: [{ name: 'http', port: 8000, protocol: 'TCP' }],
      },
      { namespace: 'sampleapp', name: 'peers', clusterIP: 'None', endpoints: ['127.64.0.7', '127.64.0.8'] },
    ]);
    fallback = new ClusterDns({ address: `127.${plan.serviceOctet}.0.11`, forceFallback: true });
  });

  afterAll(async () => {
    await server?.stop();
    await fallback?.stop();
    await release?.();
  });

  it('answers A for Services (ClusterIP and headless), case-insensitively', async () => {
    expect(await resolver.resolve4('sampleapp.sampleapp.svc.cluster.local')).toEqual([svcIP]);
    expect(await resolver.resolve4('SampleApp.sampleapp.svc.cluster.local.')).toEqual([svcIP]);
    expect((await resolver.resolve4('peers.sampleapp.svc.cluster.local')).sort()).toEqual(['127.64.0.7', '127.64.0.8']);
    expect(await resolver.resolve4('sampleapp.sampleapp.svc.cluster.local', { ttl: true })).toEqual([
      { address: svcIP, ttl: 5 },
    ]);
  });

  it('answers SRV, pod names and PTR; NXDOMAIN for unknown names, no data for other types', async () => {
    expect(await resolver.resolveSrv('_http._tcp.sampleapp.sampleapp.svc.cluster.local')).toEqual([
      expect.objectContaining({ name: 'sampleapp.sampleapp.svc.cluster.local', port: 8000, priority: 0, weight: 100 }),
    ]);
    expect(await resolver.resolve4('127-64-0-9.sampleapp.pod.cluster.local')).toEqual(['127.64.0.9']);
    expect(await resolver.reverse(svcIP)).toEqual(['sampleapp.sampleapp.svc.cluster.local']);
    await expect(resolver.resolve4('nope.sampleapp.svc.cluster.local')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolve6('sampleapp.sampleapp.svc.cluster.local')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolve4('example.com')).rejects.toMatchObject({ code: 'EREFUSED' });
  });

  it('follows table changes', async () => {
    server.upsertService({ namespace: 'x', name: 'late', clusterIP: '127.1.2.3' });
    expect(await resolver.resolve4('late.x.svc.cluster.local')).toEqual(['127.1.2.3']);
    server.removeService('x', 'late');
    await expect(resolver.resolve4('late.x.svc.cluster.local')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('serves on port 53 + 8000 when the fallback is forced', async () => {
    expect(await fallback.start()).toMatchObject({ port: 8053, fallback: true });
  });
});
