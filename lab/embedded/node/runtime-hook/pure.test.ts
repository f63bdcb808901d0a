// Pure parts of the pod runtime hook: the resolver's search-path expansion, the network rewriters, the runtime
// config of an older lab process, and the mountPath mapper.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../testing/tmp.ts';
import { searchCandidates } from './dns-names.ts';
import { pathMapper } from './hook-fs.ts';
import { netRewriter } from './hook-net.ts';
import { type PodRuntimeConfig, podSearchPath, readRuntimeConfig } from './runtime-config.ts';

describe('search path', () => {
  const opts = { search: podSearchPath('ns'), ndots: 5, clusterDomain: 'cluster.local' };
  it('tries search domains first for short names, as given first for cluster FQDNs and absolute names', () => {
    expect(searchCandidates('svc', opts).map((c) => c.fqdn)).toEqual([
      'svc.ns.svc.cluster.local',
      'svc.svc.cluster.local',
      'svc.cluster.local',
      'svc',
    ]);
    expect(searchCandidates('svc', opts).map((c) => c.cluster)).toEqual([true, true, true, false]);
    expect(searchCandidates('svc.other.svc.cluster.local', opts)[0]).toEqual({
      fqdn: 'svc.other.svc.cluster.local',
      cluster: true,
    });
    expect(searchCandidates('Example.COM.', opts)).toEqual([{ fqdn: 'example.com', cluster: false }]);
    expect(searchCandidates('a.b.c.d.e.f', opts)[0]).toEqual({ fqdn: 'a.b.c.d.e.f', cluster: false });
  });
});

describe('hook rewriters', () => {
  const cfg = {
    pod: { ip: '127.64.0.9', loopback: '127.4.0.9' },
    portShift: { below: 1024, offset: 8000, octets: [64, 4, 128] },
  } as unknown as PodRuntimeConfig;
  const rw = netRewriter(cfg);
  it('maps loopback names to the pod loopback, wildcards to both addresses, and shifts low ports on lab ranges', () => {
    expect(rw.dest('127.0.0.1')).toBe('127.4.0.9');
    expect(rw.dest('::1')).toBe('127.4.0.9');
    expect(rw.dest('0.0.0.0')).toBe('127.4.0.9');
    expect(rw.dest('127.4.0.9')).toBe('127.4.0.9');
    expect(rw.dest('127.64.0.9')).toBe('127.64.0.9');
    expect(rw.dest('127.128.0.5')).toBe('127.128.0.5');
    expect(rw.source('127.4.0.9')).toBe('127.4.0.9');
    expect(rw.source('127.64.0.7')).toBe('127.64.0.9');
    expect(rw.listen(undefined)).toEqual({ host: '127.64.0.9', companion: '127.4.0.9' });
    expect(rw.listen('::')).toEqual({ host: '127.64.0.9', companion: '127.4.0.9' });
    expect(rw.listen('0.0.0.0')).toEqual({ host: '127.64.0.9', companion: '127.4.0.9' });
    expect(rw.listen('localhost')).toEqual({ host: '127.4.0.9' });
    expect(rw.listen('127.0.0.1')).toEqual({ host: '127.4.0.9' });
    expect(rw.listen('::1')).toEqual({ host: '127.4.0.9' });
    expect(rw.listen('127.64.0.9')).toEqual({ host: '127.64.0.9' });
    expect(rw.udpHost('127.0.0.1')).toBe('127.64.0.9');
    expect(rw.port('127.128.0.5', 80)).toBe(8080);
    expect(rw.port('127.4.0.9', 80)).toBe(8080);
    expect(rw.port('127.64.0.9', 8080)).toBe(8080);
    expect(rw.port('127.0.0.53', 53)).toBe(53);
  });
  it("refuses another pod's loopback (null), not its pod IP", () => {
    expect(rw.dest('127.4.0.10')).toBeNull();
    expect(rw.dest('127.64.0.10')).toBe('127.64.0.10');
  });
  it('reads a runtime config without a pod loopback (an older lab process) as the pod IP, unisolated', () => {
    const file = join(tempDir('gwlab-rc-'), 'runtime.json');
    const old = { version: 1, pod: { ip: '127.64.0.9' }, dns: { server: '127.128.0.10', port: 53 } };
    writeFileSync(file, JSON.stringify(old));
    const cfg = readRuntimeConfig(file);
    expect(cfg.pod.loopback).toBe('127.64.0.9');
    const legacy = netRewriter(cfg);
    expect(legacy.dest('127.0.0.1')).toBe('127.64.0.9');
    expect(legacy.dest('127.64.0.10')).toBe('127.64.0.10');
    expect(legacy.listen('0.0.0.0')).toEqual({ host: '127.64.0.9' });
    expect(legacy.listen('127.0.0.1')).toEqual({ host: '127.64.0.9' });
  });
  it('maps mountPaths by longest prefix, for strings, URLs and Buffers', () => {
    const map = pathMapper([
      { mountPath: '/etc/envoy', hostPath: '/s/vol/cfg' },
      { mountPath: '/etc/envoy/extra/', hostPath: '/s/vol/extra' },
    ]);
    expect(map('/etc/envoy/envoy.yaml')).toBe('/s/vol/cfg/envoy.yaml');
    expect(map('/etc/envoy')).toBe('/s/vol/cfg');
    expect(map('/etc/envoy/extra/x')).toBe('/s/vol/extra/x');
    expect(map('/etc/envoyx')).toBe('/etc/envoyx');
    expect(map('relative/etc/envoy')).toBe('relative/etc/envoy');
    expect(map(new URL('file:///etc/envoy/a'))).toBe('/s/vol/cfg/a');
    expect(map(Buffer.from('/etc/envoy/b'))).toBe('/s/vol/cfg/b');
  });
});
