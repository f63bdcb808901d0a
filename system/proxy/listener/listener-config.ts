// A Listener resource validated down to what this proxy serves: one socket address and, in its filter chain, one
// HTTP connection manager (the only network filter implemented), with Envoy's rejection texts for the rest
// (UDP, pipes, internal listeners, TLS transport sockets, other network filters).
import { ConfigError, durationMs } from '../config/errors.ts';

type J = Record<string, any>;

const HCM_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

export interface ListenerSpec {
  name: string;
  address: string;
  port: number;
  hcm: J;
  idleTimeoutMs: number;
  statPrefix: string | undefined;
  json: J;
}

function typeName(any: J | undefined): string {
  const url = String(any?.['@type'] ?? '');
  return url.slice(url.lastIndexOf('/') + 1);
}

/** Validates a Listener (canonical JSON) down to its HTTP connection manager config. */
export function compileListener(l: J): ListenerSpec {
  const name = String(l.name ?? '');
  const sa = l.address?.socket_address;
  if (!sa) {
    throw new ConfigError(
      l.address?.pipe
        ? `listener ${name}: unix domain socket listeners are not supported`
        : `listener ${name}: address.socket_address is required`,
    );
  }
  if (sa.protocol === 'UDP' || l.udp_listener_config)
    throw new ConfigError(`listener ${name}: UDP listeners are not supported`);
  if (l.internal_listener) throw new ConfigError(`listener ${name}: internal listeners are not supported`);
  if (l.use_original_dst === true) throw new ConfigError(`listener ${name}: use_original_dst is not supported`);
  const chains = (l.filter_chains ?? []) as J[];
  const chain =
    chains.find((c) => !c.filter_chain_match || Object.keys(c.filter_chain_match).length === 0) ??
    l.default_filter_chain ??
    chains[0];
  if (!chain) throw new ConfigError(`error adding listener '${name}': no filter chains specified`);
  if (chain.transport_socket && !typeName(chain.transport_socket.typed_config).endsWith('RawBuffer')) {
    throw new ConfigError(
      `listener ${name}: transport_socket ${chain.transport_socket.name ?? ''}: TLS listeners are not supported`,
    );
  }
  const filters = (chain.filters ?? []) as J[];
  let hcm: J | undefined;
  for (const f of filters) {
    const t = typeName(f.typed_config);
    if (t === HCM_TYPE && !hcm) {
      hcm = f.typed_config;
      continue;
    }
    throw new ConfigError(
      `Didn't find a registered implementation for '${f.name ?? ''}' with type URL: '${t || '<none>'}'`,
    );
  }
  if (!hcm) throw new ConfigError(`listener ${name}: the filter chain has no http_connection_manager`);
  const address = String(sa.address ?? '');
  if (!address)
    throw new ConfigError(
      `listener ${name}: address.socket_address.address: value length must be at least 1 characters`,
    );
  return {
    name,
    address,
    port: Number(sa.port_value ?? 0),
    hcm,
    idleTimeoutMs: durationMs(hcm.common_http_protocol_options?.idle_timeout) ?? 3_600_000,
    statPrefix: l.stat_prefix || undefined,
    json: l,
  };
}
