// ListenerIR → Listener: one per port on 0.0.0.0, an HTTP connection manager whose routes come over RDS (the route
// configuration of the same name) and whose chain is the policy filters the listener's routes use, then the router.
import { TYPE_URL } from '../../../shared/envoy/protos.ts';
import type { ListenerIR } from '../../ir/types.ts';
import { ADS_SOURCE, HCM, type Json, ROUTER } from './envoy.ts';

export function translateListener(l: ListenerIR, filters: Json[]): Json {
  return {
    '@type': TYPE_URL.listener,
    name: l.name,
    address: { socket_address: { address: '0.0.0.0', port_value: l.port } },
    filter_chains: [
      {
        filters: [
          {
            name: HCM.name,
            typed_config: {
              '@type': HCM.type,
              stat_prefix: 'http',
              rds: { config_source: ADS_SOURCE, route_config_name: l.name },
              http_filters: [...filters, { name: ROUTER.name, typed_config: { '@type': ROUTER.type } }],
              // A Host header with ":<port>" still matches: the route configuration ignores the port in host matching.
            },
          },
        ],
      },
    ],
  };
}
