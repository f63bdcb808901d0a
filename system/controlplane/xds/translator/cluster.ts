// ClusterIR → Cluster (EDS over ADS, 5 s connect timeout; HTTP/2 backends, h2c Services and GRPCRoutes', with
// HttpProtocolOptions; a `websocket` cluster, appProtocol kubernetes.io/ws, is an HTTP/1.1 one: the upgrade is the
// listener's upgrade_configs, listener.ts); TLS to the endpoints when a BackendTLSPolicy applies: an
// `envoy.transport_sockets.tls` UpstreamTlsContext with the policy's hostname as `sni`, its CA certificates inline in
// `common_tls_context.validation_context.trusted_ca` (or the system bundle's file for wellKnownCACertificates:
// System, as Envoy Gateway does) and `match_typed_subject_alt_names` from subjectAltNames, else the hostname as a DNS
// SAN: GEP-1897's "Hostname MUST be used for authentication ... unless SubjectAltNames is specified"; the Gateway's
// backend client certificate inline in `tls_certificates`), a BackendConfigPolicy's settings (cluster-settings.ts),
// and a cluster's ready endpoints → ClusterLoadAssignment.
// Shapes: envoy/extensions/transport_sockets/tls/v3/{tls,common}.proto.
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import { SYSTEM_CA_FILE } from '../../ir/backend-tls.ts';
import type { ClusterIR, EndpointAddress, UpstreamTlsIR } from '../../ir/types.ts';
import { clusterSettings, http1Options, http2Options as policyHttp2 } from './cluster-settings.ts';
import { ADS_SOURCE, HTTP2_PROTOCOL_OPTIONS, type Json } from './envoy.ts';

const HTTP_PROTOCOL_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

export const UPSTREAM_TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

export function translateCluster(c: ClusterIR): Json {
  return {
    '@type': TYPE_URL.cluster,
    name: c.name,
    type: 'EDS',
    eds_cluster_config: { eds_config: ADS_SOURCE },
    connect_timeout: '5s',
    ...protocolOptions(c),
    ...(c.tls && !c.tls.invalid ? { transport_socket: upstreamTls(c.tls) } : {}),
    ...clusterSettings(c),
  };
}

/** HttpProtocolOptions: HTTP/2 for HTTP/2 backends (with a policy's HTTP/2 options), a policy's HTTP/1 options else. */
function protocolOptions(c: ClusterIR): Json {
  if (c.protocol === 'http2') return { typed_extension_protocol_options: http2Options(c) };
  const h1 = http1Options(c.backendConfig?.http1);
  if (!h1) return {};
  return {
    typed_extension_protocol_options: {
      [HTTP_PROTOCOL_OPTIONS]: {
        '@type': `type.googleapis.com/${HTTP_PROTOCOL_OPTIONS}`,
        explicit_http_config: { http_protocol_options: h1 },
      },
    },
  };
}

/**
 * An HTTP/2 backend (ClusterIR.protocol, from appProtocol kubernetes.io/h2c): HttpProtocolOptions with
 * explicit_http_config.http2_protocol_options, as Envoy Gateway's buildTypedExtensionProtocolOptions writes it.
 */
function http2Options(c: ClusterIR): Json {
  return {
    [HTTP_PROTOCOL_OPTIONS]: {
      '@type': `type.googleapis.com/${HTTP_PROTOCOL_OPTIONS}`,
      explicit_http_config: {
        http2_protocol_options: { ...HTTP2_PROTOCOL_OPTIONS, ...policyHttp2(c.backendConfig?.http2) },
      },
    },
  };
}

function upstreamTls(t: UpstreamTlsIR): Json {
  const sans = t.sans.length ? t.sans : [{ type: 'DNS' as const, value: t.sni }];
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': UPSTREAM_TLS_CONTEXT,
      common_tls_context: {
        ...(t.clientCertificate
          ? {
              tls_certificates: [
                {
                  certificate_chain: { inline_bytes: t.clientCertificate.certificateChain },
                  private_key: { inline_bytes: t.clientCertificate.privateKey },
                },
              ],
            }
          : {}),
        validation_context: {
          trusted_ca: t.systemCa ? { filename: SYSTEM_CA_FILE } : { inline_string: t.trustedCa ?? '' },
          match_typed_subject_alt_names: sans.map((s) => ({ san_type: s.type, matcher: { exact: s.value } })),
        },
      },
      sni: t.sni,
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
