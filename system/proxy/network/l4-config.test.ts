// What the proxy accepts of TCP and UDP listeners and what it refuses (NACK texts): tcp_proxy needs a cluster or
// weighted_clusters and refuses what it does not implement; a UDP listener needs exactly one udp_proxy listener
// filter and no filter chains; udp_proxy takes an unconditional matcher (on_no_match Route) or the deprecated cluster.
import { describe, expect, it } from 'vitest';
import { compileListener } from '../listener/listener-config.ts';

const TCP = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const UDP = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig';
const addr = (protocol?: string) => ({
  socket_address: { ...(protocol ? { protocol } : {}), address: '0.0.0.0', port_value: 9000 },
});
const tcp = (cfg: Record<string, unknown>) => ({
  name: 'l',
  address: addr(),
  filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP, stat_prefix: 's', ...cfg } }] }],
});
const udp = (cfg: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'u',
  address: addr('UDP'),
  listener_filters: [{ name: 'udp', typed_config: { '@type': UDP, stat_prefix: 's', ...cfg } }],
  ...extra,
});

describe('TCP and UDP listeners', () => {
  it('compile tcp_proxy (cluster, weighted_clusters, idle_timeout 1h by default)', () => {
    expect(compileListener(tcp({ cluster: 'c' })).tcpProxy).toEqual({
      statPrefix: 's',
      clusters: [{ name: 'c', weight: 1 }],
      idleTimeoutMs: 3_600_000,
    });
    const w = compileListener(tcp({ weighted_clusters: { clusters: [{ name: 'a', weight: 3 }] }, idle_timeout: '0s' }));
    expect([w.kind, w.tcpProxy?.clusters, w.tcpProxy?.idleTimeoutMs]).toEqual(['tcp', [{ name: 'a', weight: 3 }], 0]);
  });

  it('refuse what tcp_proxy does not implement', () => {
    expect(() => compileListener(tcp({ cluster: 'c', tunneling_config: { hostname: 'h' } }))).toThrow(
      'tcp_proxy: tunneling_config is not supported',
    );
    expect(() => compileListener(tcp({ cluster: 'c', max_connect_attempts: 3 }))).toThrow(
      'tcp_proxy: max_connect_attempts > 1 is not supported',
    );
  });

  it('compile udp_proxy from an on_no_match route or the deprecated cluster (idle_timeout 1 min by default)', () => {
    const route = { '@type': 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route', cluster: 'd' };
    const m = compileListener(udp({ matcher: { on_no_match: { action: { name: 'route', typed_config: route } } } }));
    expect([m.kind, m.udpProxy]).toEqual(['udp', { statPrefix: 's', cluster: 'd', idleTimeoutMs: 60_000 }]);
    expect(compileListener(udp({ cluster: 'e', idle_timeout: '5s' })).udpProxy).toEqual({
      statPrefix: 's',
      cluster: 'e',
      idleTimeoutMs: 5000,
    });
  });

  it('refuse a UDP listener without udp_proxy or with filter chains, and conditional matchers', () => {
    expect(() => compileListener({ name: 'u', address: addr('UDP'), udp_listener_config: {} })).toThrow(
      'listener u: a UDP listener needs exactly one udp_proxy listener filter',
    );
    expect(() => compileListener(udp({ cluster: 'e' }, { filter_chains: [{ filters: [] }] }))).toThrow(
      'a UDP listener takes no filter_chains',
    );
    expect(() => compileListener(udp({ matcher: { matcher_list: {} } }))).toThrow(
      'udp_proxy: matchers with conditions are not supported (only on_no_match)',
    );
  });
});
