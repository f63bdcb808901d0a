// ClusterIR → Cluster (EDS over ADS, 5 s connect timeout), and a cluster's ready endpoints → ClusterLoadAssignment.
// A `websocket` cluster (appProtocol kubernetes.io/ws) is an HTTP/1.1 one: the upgrade is the listener's
// upgrade_configs (listener.ts).
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import type { ClusterIR, EndpointAddress } from '../../ir/types.ts';
import { ADS_SOURCE, type Json } from './envoy.ts';

export function translateCluster(c: ClusterIR): Json {
  return {
    '@type': TYPE_URL.cluster,
    name: c.name,
    type: 'EDS',
    eds_cluster_config: { eds_config: ADS_SOURCE },
    connect_timeout: '5s',
  };
}

/** The ClusterLoadAssignment of one cluster: its ready endpoints. */
export function translateEndpoints(cluster: string, endpoints: EndpointAddress[]): Json {
  const out: Json = { '@type': TYPE_URL.clusterLoadAssignment, cluster_name: cluster };
  if (endpoints.length) {
    out.endpoints = [
      {
        lb_endpoints: endpoints.map((e) => ({
          endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
          ...(e.weight !== undefined ? { load_balancing_weight: e.weight } : {}),
        })),
      },
    ];
  }
  return out;
}
