// An HTTPS port's filter chains (ListenerIR.tls): one per Gateway listener, matched by SNI through the
// `tls_inspector` listener filter (`filter_chain_match.server_names` from the listener's hostname; a listener without
// hostname is the chain without server_names), each with a `envoy.transport_sockets.tls` DownstreamTlsContext
// carrying its certificates inline (certificate_chain / private_key `inline_bytes`, the Secret's data as it is: the
// control plane pushes them with the listener, no SDS; see the control plane README), ALPN `h2`, `http/1.1`.
// GEP-91 client certificate validation (TlsChainIR.clientValidation) as Envoy Gateway configures it: the CAs in
// `common_tls_context.validation_context.trusted_ca` (inline_string), AllowValidOnly → `require_client_certificate:
// true`; AllowInsecureFallback → no requirement and `trust_chain_verification: ACCEPT_UNTRUSTED` (the certificate is
// asked for, a missing or untrusted one accepted).
// Shapes: envoy/config/listener/v3/listener_components.proto (FilterChainMatch), envoy/extensions/transport_sockets/
// tls/v3/{tls,common}.proto, envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto.
import type { TlsChainIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

export const TLS_INSPECTOR = {
  name: 'envoy.filters.listener.tls_inspector',
  type: 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
};
export const TLS_TRANSPORT_SOCKET = {
  name: 'envoy.transport_sockets.tls',
  type: 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
};

/**
 * The filter chain of one HTTPS Gateway listener around the port's network filters (a TLS Terminate listener's
 * tcp_proxy chains too, without ALPN: `alpn` empty).
 */
export function tlsFilterChain(c: TlsChainIR, filters: Json[], alpn: string[] = ['h2', 'http/1.1']): Json {
  return {
    ...(c.serverNames.length ? { filter_chain_match: { server_names: c.serverNames } } : {}),
    filters,
    transport_socket: {
      name: TLS_TRANSPORT_SOCKET.name,
      typed_config: {
        '@type': TLS_TRANSPORT_SOCKET.type,
        common_tls_context: {
          tls_certificates: c.certificates.map((cert) => ({
            certificate_chain: { inline_bytes: cert.certificateChain },
            private_key: { inline_bytes: cert.privateKey },
          })),
          // Envoy Gateway's default ALPN for HTTPS listeners: HTTP/2 first, then HTTP/1.1 (none before tcp_proxy).
          ...(alpn.length ? { alpn_protocols: alpn } : {}),
          ...(c.clientValidation
            ? {
                validation_context: {
                  trusted_ca: { inline_string: c.clientValidation.trustedCa },
                  ...(c.clientValidation.mode === 'AllowInsecureFallback'
                    ? { trust_chain_verification: 'ACCEPT_UNTRUSTED' }
                    : {}),
                },
              }
            : {}),
        },
        ...(c.clientValidation?.mode === 'AllowValidOnly' ? { require_client_certificate: true } : {}),
      },
    },
    name: c.listener,
  };
}
