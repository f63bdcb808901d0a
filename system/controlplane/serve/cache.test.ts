import { describe, expect, it } from 'vitest';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import type { SnapshotResources } from '../pipeline.ts';
import { checkConsistency, SnapshotCache } from './cache.ts';

const T = {
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  cla: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  rc: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  hcm: 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
};

function resources(o: { endpoints?: boolean; routes?: boolean; timeout?: string } = {}): SnapshotResources {
  const listener = {
    '@type': T.listener,
    name: 'listener~8080',
    address: { socket_address: { address: '0.0.0.0', port_value: 8080 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': T.hcm,
              stat_prefix: 'http',
              rds: { config_source: { ads: {} }, route_config_name: 'listener~8080' },
            },
          },
        ],
      },
    ],
  };
  return {
    role: 'gwvendor-kube-gateway-api~ns~gw',
    gateway: 'ns/gw',
    clusters: [
      { '@type': T.cluster, name: 'kube_ns_svc_80', type: 'EDS', eds_cluster_config: { eds_config: { ads: {} } } },
    ],
    endpoints: o.endpoints === false ? [] : [{ '@type': T.cla, cluster_name: 'kube_ns_svc_80', endpoints: [] }],
    listeners: [listener],
    routes:
      o.routes === false
        ? []
        : [
            {
              '@type': T.rc,
              name: 'listener~8080',
              virtual_hosts: [
                {
                  name: 'vh',
                  domains: ['*'],
                  routes: [
                    { match: { prefix: '/' }, route: { cluster: 'kube_ns_svc_80', timeout: o.timeout ?? '15s' } },
                  ],
                },
              ],
            },
          ],
  } as unknown as SnapshotResources;
}

describe('snapshot cache', () => {
  it('refuses an inconsistent snapshot (EDS cluster without endpoints, RDS name without routes) and keeps the last one', () => {
    expect(() => checkConsistency(resources({ endpoints: false }))).toThrow(
      'cluster kube_ns_svc_80 has no ClusterLoadAssignment',
    );
    expect(() => checkConsistency(resources({ routes: false }))).toThrow(
      'listener listener~8080 refers to missing RouteConfiguration listener~8080',
    );
    const cache = new SnapshotCache();
    const good = cache.set(resources());
    expect(() => cache.set(resources({ routes: false }))).toThrow(/missing RouteConfiguration/);
    expect(cache.get(good.role)).toBe(good);
  });

  it('versions only what changed, keeps the encoded bytes of what did not, and never reuses a version', () => {
    const cache = new SnapshotCache();
    const pushed: number[] = [];
    cache.onChange((s) => pushed.push(s.version));
    const v1 = cache.set(resources());
    expect(cache.set(resources())).toBe(v1);
    const v2 = cache.set(resources({ timeout: '5s' }));
    expect(v2.version).toBe(2);
    expect(v2.types[TYPE_URL.routeConfiguration].version).toBe('2');
    expect(v2.types[TYPE_URL.cluster].version).toBe('1');
    expect(v2.types[TYPE_URL.cluster].byName.get('kube_ns_svc_80')).toBe(
      v1.types[TYPE_URL.cluster].byName.get('kube_ns_svc_80'),
    );
    expect(cache.encodes).toBe(5);
    cache.delete(v2.role);
    expect(cache.set(resources()).version).toBe(3);
    expect(pushed).toEqual([1, 2, 3]);
  });
});
