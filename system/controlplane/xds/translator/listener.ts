// ListenerIR → Listener: one per port on 0.0.0.0, an HTTP connection manager whose routes come over RDS (the route
// configuration of the same name) and whose chain is the policy filters the listener's routes use, then the router;
// HTTP/1.1 and HTTP/2 (Envoy Gateway's http2_protocol_options).
// An HTTPS port (ListenerIR.tls) has the `tls_inspector` listener filter and a TLS filter chain per Gateway listener
// (tls.ts), all with that same connection manager but each with its own route configuration (TlsChainIR.routeConfig:
// the listener's virtual hosts and 421 for the others', route.ts). Every connection manager allows WebSocket
// upgrades (`upgrade_configs`). A ListenerPolicy's settings (hcm-settings.ts) join the connection manager, and the
// Listener's metadata names their policy.
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import type { ListenerIR } from '../../ir/types.ts';
import { ADS_SOURCE, HCM, HTTP2_PROTOCOL_OPTIONS, type Json, ROUTER } from './envoy.ts';
import { hcmSettings } from './hcm-settings.ts';
import { TLS_INSPECTOR, tlsFilterChain } from './tls.ts';

export function translateListener(l: ListenerIR, filters: Json[]): Json {
  const settings = hcmSettings(l.hcm);
  const hcm = (routeConfig: string) => [
    {
      name: HCM.name,
      typed_config: {
        '@type': HCM.type,
        stat_prefix: l.tls ? 'https' : 'http',
        rds: { config_source: ADS_SOURCE, route_config_name: routeConfig },
        http_filters: [...filters, { name: ROUTER.name, typed_config: { '@type': ROUTER.type } }],
        // codec_type AUTO (the default): HTTP/2 by ALPN h2 over TLS, h2c with prior knowledge in the clear.
        http2_protocol_options: HTTP2_PROTOCOL_OPTIONS,
        // WebSocket upgrades on every connection manager, as Envoy Gateway and kgateway configure theirs (Gateway
        // API's HTTPRouteBackendProtocolWebSocket: a `kubernetes.io/ws` backend needs nothing more).
        upgrade_configs: [{ upgrade_type: 'websocket' }],
        // A Host header with ":<port>" still matches: the route configuration ignores the port in host matching.
        ...settings.hcm,
      },
    },
  ];
  const address = { socket_address: { address: '0.0.0.0', port_value: l.port } };
  const meta = settings.metadata ? { metadata: settings.metadata } : {};
  if (l.tls) {
    return {
      '@type': TYPE_URL.listener,
      name: l.name,
      address,
      filter_chains: l.tls.map((c) => tlsFilterChain(c, hcm(c.routeConfig ?? l.name))),
      listener_filters: [{ name: TLS_INSPECTOR.name, typed_config: { '@type': TLS_INSPECTOR.type } }],
      ...meta,
    };
  }
  return { '@type': TYPE_URL.listener, name: l.name, address, filter_chains: [{ filters: hcm(l.name) }], ...meta };
}
