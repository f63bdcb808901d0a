// L4ListenerIR → Listener: TCP with one `envoy.filters.network.tcp_proxy` network filter (TcpProxy: `cluster`, or
// `weighted_clusters` for several backends; `blackhole-cluster`, never defined, when nothing resolved, so every
// connection is closed), UDP with `udp_listener_config` and the `envoy.filters.udp_listener.udp_proxy` listener filter
// (UdpProxyConfig routing every session to one cluster through its matcher's on_no_match, as Envoy's docs show it
// since `cluster` was deprecated). TLS (TLSRoutes): the `tls_inspector` listener filter and one filter chain per
// L4ChainIR, `filter_chain_match.server_names` its SNI names, a tcp_proxy to its backends, and for tls.mode Terminate
// the DownstreamTlsContext of the listener's certificates (tls.ts; no ALPN: the bytes go to tcp_proxy); no chain
// matches: Envoy closes the connection (listener stat no_filter_chain_match). Shapes: envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto and
// envoy/extensions/filters/udp/udp_proxy/v3/{udp_proxy,route}.proto (the protos in @grpc/grpc-js-xds).
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import { BLACKHOLE_CLUSTER } from '../../ir/backend-refs.ts';
import type { L4ListenerIR, WeightedClusterIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';
import { TLS_INSPECTOR, tlsFilterChain } from './tls.ts';

export const TCP_PROXY = {
  name: 'envoy.filters.network.tcp_proxy',
  type: 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
};
export const UDP_PROXY = {
  name: 'envoy.filters.udp_listener.udp_proxy',
  type: 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig',
  route: 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route',
};

export function translateL4Listener(l: L4ListenerIR): Json {
  const address = { address: '0.0.0.0', port_value: l.port };
  if (l.protocol === 'UDP') {
    // Envoy's udp_proxy routes a session to one cluster: several backendRefs are one weighted cluster by now
    // (ir/l4-listeners.ts).
    const cluster = l.backends[0]?.cluster ?? BLACKHOLE_CLUSTER;
    return {
      '@type': TYPE_URL.listener,
      name: l.name,
      address: { socket_address: { protocol: 'UDP', ...address } },
      listener_filters: [
        {
          name: UDP_PROXY.name,
          typed_config: {
            '@type': UDP_PROXY.type,
            stat_prefix: `udp-${l.port}`,
            matcher: {
              on_no_match: { action: { name: 'route', typed_config: { '@type': UDP_PROXY.route, cluster } } },
            },
          },
        },
      ],
      udp_listener_config: {},
    };
  }
  if (l.protocol === 'TLS') {
    // No route: one chain to blackhole-cluster, so the port refuses every connection (Envoy refuses a listener
    // without filter chains).
    if (!l.chains?.length) {
      return { ...base(l), filter_chains: [{ filters: [tcpProxy(`tls-${l.port}`, [])] }] };
    }
    return {
      '@type': TYPE_URL.listener,
      name: l.name,
      address: { socket_address: address },
      filter_chains: (l.chains ?? []).map((c) => {
        const filters = [tcpProxy(`tls-${l.port}`, c.backends)];
        if (c.certificates) {
          const tc = { listener: c.name, serverNames: c.serverNames, certificates: c.certificates };
          return tlsFilterChain(tc, filters, []);
        }
        return {
          ...(c.serverNames.length ? { filter_chain_match: { server_names: c.serverNames } } : {}),
          filters,
          name: c.name,
        };
      }),
      listener_filters: [{ name: TLS_INSPECTOR.name, typed_config: { '@type': TLS_INSPECTOR.type } }],
    };
  }
  return {
    '@type': TYPE_URL.listener,
    name: l.name,
    address: { socket_address: address },
    filter_chains: [{ filters: [tcpProxy(`tcp-${l.port}`, l.backends)] }],
  };
}

function base(l: L4ListenerIR): Json {
  return {
    '@type': TYPE_URL.listener,
    name: l.name,
    address: { socket_address: { address: '0.0.0.0', port_value: l.port } },
  };
}

/** The tcp_proxy network filter to weighted backends (none: blackhole-cluster, so connections are closed). */
function tcpProxy(statPrefix: string, backends: WeightedClusterIR[]): Json {
  const tcp: Json = { '@type': TCP_PROXY.type, stat_prefix: statPrefix };
  if (backends.length > 1) {
    tcp.weighted_clusters = { clusters: backends.map((b) => ({ name: b.cluster, weight: b.weight })) };
  } else tcp.cluster = backends[0]?.cluster ?? BLACKHOLE_CLUSTER;
  return { name: TCP_PROXY.name, typed_config: tcp };
}
