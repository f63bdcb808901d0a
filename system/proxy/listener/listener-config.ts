// A Listener resource validated down to what this proxy serves: one socket address and either, in its filter chain,
// one HTTP connection manager or one tcp_proxy (the network filters implemented), or, for a UDP listener
// (socket_address.protocol UDP / udp_listener_config), the udp_proxy listener filter; with Envoy's rejection texts
// for the rest (pipes, internal listeners, other filters). Filter chains with a TLS transport socket (tls-config.ts)
// make an `https` listener: each chain its secure context and server_names, all with the same network filters but
// for the connection manager's RDS route configuration, which each chain may name (its requests use that one).
// Filter chains of tcp_proxy picked by SNI (TLSRoute listeners: passthrough or TLS terminated before tcp_proxy) make
// a `tcp` listener with `sniChains` (network/tls-inspector.ts).
import { ConfigError, durationMs } from '../config/errors.ts';
import { compileTcpProxy, type TcpProxyConfig } from '../network/tcp-proxy.ts';
import { compileSniChains, isSniTcpListener, type SniChain } from '../network/tls-inspector.ts';
import { compileUdpProxy, type UdpProxyConfig } from '../network/udp-proxy.ts';
import { checkTlsChainMatch, compileTlsChain, DOWNSTREAM_TLS_CONTEXT, type TlsChain } from '../tls/tls-config.ts';

type J = Record<string, any>;

const HCM_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const TCP_PROXY_TYPE = 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const UDP_PROXY_TYPE = 'envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig';

export interface ListenerSpec {
  name: string;
  /** What serves it: the HTTP connection manager (in the clear, or behind TLS), a tcp_proxy, or (UDP) a udp_proxy. */
  kind: 'http' | 'https' | 'tcp' | 'udp';
  /** https: the TLS filter chains, picked by SNI (pickTlsChain). */
  tls?: TlsChain[];
  address: string;
  port: number;
  /** The HCM's config ({} for TCP and UDP listeners). */
  hcm: J;
  tcpProxy?: TcpProxyConfig;
  /** tcp: filter chains picked by the ClientHello's SNI, each a tcp_proxy (passthrough or behind TLS). */
  sniChains?: SniChain[];
  udpProxy?: UdpProxyConfig;
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
  if (l.internal_listener) throw new ConfigError(`listener ${name}: internal listeners are not supported`);
  if (l.use_original_dst === true) throw new ConfigError(`listener ${name}: use_original_dst is not supported`);
  const address = String(sa.address ?? '');
  if (!address)
    throw new ConfigError(
      `listener ${name}: address.socket_address.address: value length must be at least 1 characters`,
    );
  const base = { name, address, port: Number(sa.port_value ?? 0), statPrefix: l.stat_prefix || undefined, json: l };
  if (sa.protocol === 'UDP' || l.udp_listener_config) return { ...base, ...compileUdpListener(l, name) };
  if (isSniTcpListener(l))
    return { ...base, kind: 'tcp', hcm: {}, sniChains: compileSniChains(l, name), idleTimeoutMs: 0 };
  const chains = (l.filter_chains ?? []) as J[];
  const tlsChains = compileTlsChains(l, name);
  const chain =
    chains.find((c) => !c.filter_chain_match || Object.keys(c.filter_chain_match).length === 0) ??
    l.default_filter_chain ??
    chains[0];
  if (!chain) throw new ConfigError(`error adding listener '${name}': no filter chains specified`);
  if (!tlsChains && chain.transport_socket && !typeName(chain.transport_socket.typed_config).endsWith('RawBuffer')) {
    throw new ConfigError(
      `listener ${name}: transport_socket ${chain.transport_socket.name ?? ''}: ${typeName(chain.transport_socket.typed_config)} is not supported`,
    );
  }
  const filters = (chain.filters ?? []) as J[];
  let hcm: J | undefined;
  let tcp: J | undefined;
  for (const f of filters) {
    const t = typeName(f.typed_config);
    if (t === HCM_TYPE && !hcm && !tcp) {
      hcm = f.typed_config;
      continue;
    }
    if (t === TCP_PROXY_TYPE && !hcm && !tcp) {
      tcp = f.typed_config;
      continue;
    }
    throw new ConfigError(
      `Didn't find a registered implementation for '${f.name ?? ''}' with type URL: '${t || '<none>'}'`,
    );
  }
  // tcp_proxy keeps its own idle timeout (both directions); the connection handler's is off.
  if (tcp && tlsChains) throw new ConfigError(`listener ${name}: TLS termination before tcp_proxy is not supported`);
  if (tcp) return { ...base, kind: 'tcp', hcm: {}, tcpProxy: compileTcpProxy(tcp), idleTimeoutMs: 0 };
  if (!hcm) throw new ConfigError(`listener ${name}: the filter chain has no http_connection_manager`);
  return {
    ...base,
    kind: tlsChains ? 'https' : 'http',
    ...(tlsChains ? { tls: tlsChains } : {}),
    hcm,
    idleTimeoutMs: durationMs(hcm.common_http_protocol_options?.idle_timeout) ?? 3_600_000,
  };
}

/** A UDP listener: no filter chains, its one listener filter a udp_proxy. */
function compileUdpListener(l: J, name: string) {
  if ((l.filter_chains ?? []).length)
    throw new ConfigError(
      `listener ${name}: a UDP listener takes no filter_chains (use the udp_proxy listener filter)`,
    );
  const filters = (l.listener_filters ?? []) as J[];
  const udp = filters.filter((f) => typeName(f.typed_config) === UDP_PROXY_TYPE);
  const other = filters.find((f) => typeName(f.typed_config) !== UDP_PROXY_TYPE);
  if (other) {
    throw new ConfigError(
      `Didn't find a registered implementation for '${other.name ?? ''}' with type URL: '${typeName(other.typed_config) || '<none>'}'`,
    );
  }
  if (udp.length !== 1)
    throw new ConfigError(`listener ${name}: a UDP listener needs exactly one udp_proxy listener filter`);
  return { kind: 'udp' as const, hcm: {}, udpProxy: compileUdpProxy(udp[0].typed_config), idleTimeoutMs: 0 };
}

const isTls = (c: J) => typeName(c.transport_socket?.typed_config) === DOWNSTREAM_TLS_CONTEXT;

/** A chain's connection manager's RDS route configuration name ('' without one). */
const rdsName = (c: J): string =>
  String(
    ((c.filters ?? []) as J[]).find((f) => typeName(f.typed_config) === HCM_TYPE)?.typed_config?.rds
      ?.route_config_name ?? '',
  );

/** A chain's network filters as JSON, its HCM's RDS name left out (chains may each name their route configuration). */
function filtersBesidesRds(c: J): string {
  return JSON.stringify(
    ((c.filters ?? []) as J[]).map((f) =>
      f.typed_config?.rds
        ? { ...f, typed_config: { ...f.typed_config, rds: { ...f.typed_config.rds, route_config_name: '' } } }
        : f,
    ),
  );
}

/**
 * The TLS filter chains, when the listener's chains terminate TLS (undefined when none does): every chain then must,
 * with the same network filters (one connection manager serves them all here) but for the RDS route configuration
 * name (`routeConfigName`, set when they differ), and distinct matches (Envoy:
 * "multiple filter chains with the same matching rules are defined").
 */
function compileTlsChains(l: J, name: string): TlsChain[] | undefined {
  const chains = (l.filter_chains ?? []) as J[];
  if (!chains.some(isTls) && !(l.default_filter_chain && isTls(l.default_filter_chain))) return undefined;
  if (l.default_filter_chain) throw new ConfigError(`listener ${name}: default_filter_chain is not supported with TLS`);
  const out: TlsChain[] = [];
  const seen = new Set<string>();
  const filters = filtersBesidesRds(chains[0]);
  const rdsNames = new Set(chains.map(rdsName));
  for (const [i, c] of chains.entries()) {
    if (!isTls(c))
      throw new ConfigError(
        `listener ${name}: filter_chains[${i}]: mixing TLS and plaintext filter chains is not supported`,
      );
    if (filtersBesidesRds(c) !== filters)
      throw new ConfigError(
        `listener ${name}: filter_chains[${i}]: TLS filter chains with different filters are not supported`,
      );
    checkTlsChainMatch(c, name, i);
    const compiled = compileTlsChain(c, name, i);
    const rds = rdsName(c);
    if (rdsNames.size > 1 && rds) compiled.routeConfigName = rds;
    if (out.length && compiled.alpn.join(',') !== out[0]!.alpn.join(','))
      throw new ConfigError(
        `listener ${name}: filter_chains[${i}]: TLS filter chains with different alpn_protocols are not supported`,
      );
    for (const n of compiled.serverNames.length ? compiled.serverNames.map((x) => x.toLowerCase()) : ['']) {
      if (seen.has(n))
        throw new ConfigError(
          `error adding listener '${name}': multiple filter chains with the same matching rules are defined`,
        );
      seen.add(n);
    }
    out.push(compiled);
  }
  return out;
}
