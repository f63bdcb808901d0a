// ClusterIR → Cluster (EDS over ADS, 5 s connect timeout; HTTP/2 backends, h2c Services and GRPCRoutes', with
// HttpProtocolOptions), and a cluster's ready endpoints → ClusterLoadAssignment. A `websocket` cluster (appProtocol
// kubernetes.io/ws) is an HTTP/1.1 one: the upgrade is the listener's upgrade_configs (listener.ts).
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import type { ClusterIR, EndpointAddress } from '../../ir/types.ts';
import { ADS_SOURCE, HTTP2_PROTOCOL_OPTIONS, type Json } from './envoy.ts';

const HTTP_PROTOCOL_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

export function translateCluster(c: ClusterIR): Json {
  return {
    '@type': TYPE_URL.cluster,
    name: c.name,
    type: 'EDS',
    eds_cluster_config: { eds_config: ADS_SOURCE },
    connect_timeout: '5s',
    ...(c.protocol === 'http2' ? { typed_extension_protocol_options: http2Options() } : {}),
  };
}

/**
 * An HTTP/2 backend (ClusterIR.protocol, from appProtocol kubernetes.io/h2c): HttpProtocolOptions with
 * explicit_http_config.http2_protocol_options, as Envoy Gateway's buildTypedExtensionProtocolOptions writes it.
 */
function http2Options(): Json {
  return {
    [HTTP_PROTOCOL_OPTIONS]: {
      '@type': `type.googleapis.com/${HTTP_PROTOCOL_OPTIONS}`,
      explicit_http_config: { http2_protocol_options: HTTP2_PROTOCOL_OPTIONS },
    },
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
