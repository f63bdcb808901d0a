// A TCP listener whose filter chains are picked by the TLS ClientHello (Envoy's `envoy.filters.listener.tls_inspector`
// listener filter, then filter chain matching by `server_names`: source/common/listener_manager/
// filter_chain_manager_impl.cc), each chain a tcp_proxy: the TLSRoute listeners. The ClientHello is read without
// terminating TLS (client-hello.ts); the chain is the one whose server_names match the SNI (exact, then the longest
// wildcard suffix, then the chain without server_names: pickTlsChain); none: the connection is closed, counted in the
// listener's `no_filter_chain_match` and logged as Envoy's connection handler does ("closing connection from <addr>:
// no matching filter chain found"). Then either the raw connection, ClientHello included, goes to the chain's
// tcp_proxy (TLS passthrough), or the chain's DownstreamTlsContext terminates TLS on it (node:tls) and the plaintext
// goes to the tcp_proxy: `ssl.*` stats as Envoy's (handshake, connection_error...), the `[connection]` debug lines of
// Envoy's SSL socket ("handshake expecting read", "handshake complete", "remote address:<addr>,TLS_error:...").
// Stats `tls_inspector.*` (tls_found, tls_not_found, sni_found, sni_not_found, alpn_found, alpn_not_found,
// client_hello_too_large, bytes_processed), the `[filter]` debug line "tls:onServerName(), requestedServerName: <name>"
// (tls_inspector.cc). Listener filter timeout: Envoy's default listener_filters_timeout, 15 s, then the connection is
// closed (downstream_pre_cx_timeout).
import type net from 'node:net';
import tls from 'node:tls';
import { ConfigError } from '../config/errors.ts';
import type { Logger } from '../log.ts';
import type { Counter, Histogram } from '../stats.ts';
import { SslStats } from '../tls/ssl-stats.ts';
import { compileTlsChain, pickTlsChain, type TlsChain, tlsError } from '../tls/tls-config.ts';
import { parseClientHello } from './client-hello.ts';
import { compileTcpProxy, TcpProxy, type TcpProxyConfig, type TcpProxyDeps } from './tcp-proxy.ts';

type J = Record<string, any>;

const TCP_PROXY_TYPE = 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const TLS_CONTEXT_TYPE = 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const LISTENER_FILTERS_TIMEOUT_MS = 15_000;

/** One filter chain of such a listener. */
export interface SniChain {
  name: string;
  /** SNI names it matches (exact or `*.suffix`); empty: every other name, and no SNI. */
  serverNames: string[];
  tcpProxy: TcpProxyConfig;
  /** A DownstreamTlsContext: TLS is terminated here; absent: passthrough. */
  tls?: TlsChain;
}

const typeName = (any: J | undefined) => {
  const url = String(any?.['@type'] ?? '');
  return url.slice(url.lastIndexOf('/') + 1);
};

/** Does this listener route TCP by SNI (several chains, or server_names, or TLS in front of tcp_proxy)? */
export function isSniTcpListener(l: J): boolean {
  const chains = (l.filter_chains ?? []) as J[];
  const tcp = (c: J) => (c.filters ?? []).some((f: J) => typeName(f.typed_config) === TCP_PROXY_TYPE);
  if (!chains.length || !chains.every(tcp)) return false;
  return chains.length > 1 || chains.some((c) => c.filter_chain_match?.server_names?.length || c.transport_socket);
}

/** The chains, with Envoy's rejections: one tcp_proxy each, server_names only, no two with the same match. */
export function compileSniChains(l: J, listener: string): SniChain[] {
  if (l.default_filter_chain)
    throw new ConfigError(`listener ${listener}: default_filter_chain is not supported with SNI routing`);
  const seen = new Set<string>();
  return ((l.filter_chains ?? []) as J[]).map((c, i) => {
    const where = `listener ${listener}: filter_chains[${i}]`;
    for (const k of Object.keys(c.filter_chain_match ?? {})) {
      if (k !== 'server_names') throw new ConfigError(`${where}.filter_chain_match.${k} is not supported`);
    }
    const filters = (c.filters ?? []) as J[];
    if (filters.length !== 1 || typeName(filters[0].typed_config) !== TCP_PROXY_TYPE)
      throw new ConfigError(`${where}: exactly one tcp_proxy network filter is supported beside other chains`);
    const serverNames = (c.filter_chain_match?.server_names ?? []) as string[];
    for (const n of serverNames.length ? serverNames.map((x) => x.toLowerCase()) : ['']) {
      if (seen.has(n))
        throw new ConfigError(
          `error adding listener '${listener}': multiple filter chains with the same matching rules are defined`,
        );
      seen.add(n);
    }
    const ts = c.transport_socket;
    if (ts && typeName(ts.typed_config) !== TLS_CONTEXT_TYPE && !typeName(ts.typed_config).endsWith('RawBuffer'))
      throw new ConfigError(`${where}: transport_socket ${ts.name ?? ''} is not supported`);
    const terminate = ts && typeName(ts.typed_config) === TLS_CONTEXT_TYPE;
    const tls = terminate ? compileTlsChain(c, listener, i) : undefined;
    // Client certificates are verified on HTTPS chains only (tls/client-cert.ts), not refused silently here.
    if (tls?.clientCert)
      throw new ConfigError(`${where}: client certificate validation before tcp_proxy is not supported`);
    return {
      name: String(c.name ?? ''),
      serverNames,
      tcpProxy: compileTcpProxy(filters[0].typed_config),
      ...(tls ? { tls } : {}),
    };
  });
}

const INSPECTOR_COUNTERS = [
  'tls_found',
  'tls_not_found',
  'sni_found',
  'sni_not_found',
  'alpn_found',
  'alpn_not_found',
  'client_hello_too_large',
] as const;

export interface SniTcpDeps extends TcpProxyDeps {
  /** The listener's stat prefix (`listener.<address>_<port>.`). */
  listenerStatPrefix: string;
}

/** The runtime of such a listener: the inspector, then per chain its tcp_proxy (and TLS termination). */
export class SniTcpProxy {
  readonly kind = 'tcp' as const;
  readonly chains: SniChain[];
  private readonly proxies: TcpProxy[];
  private readonly ssl: SslStats | undefined;
  private readonly inspector: Record<(typeof INSPECTOR_COUNTERS)[number], Counter>;
  private readonly bytesProcessed: Histogram;
  private readonly noChain: Counter;
  private readonly preTimeout: Counter;
  private readonly log: { filter: Logger; connection: Logger; connHandler: Logger };

  constructor(chains: SniChain[], deps: SniTcpDeps) {
    this.chains = chains;
    this.proxies = chains.map((c) => new TcpProxy(c.tcpProxy, deps));
    this.ssl = chains.some((c) => c.tls) ? new SslStats(deps.listenerStatPrefix, deps.stats) : undefined;
    this.inspector = deps.stats.group('tls_inspector.', INSPECTOR_COUNTERS);
    this.bytesProcessed = deps.stats.histogram('tls_inspector.bytes_processed', 'Bytes');
    this.noChain = deps.stats.counter(`${deps.listenerStatPrefix}no_filter_chain_match`);
    this.preTimeout = deps.stats.counter(`${deps.listenerStatPrefix}downstream_pre_cx_timeout`);
    this.log = {
      filter: deps.logs.logger('filter'),
      connection: deps.logs.logger('connection'),
      connHandler: deps.logs.logger('conn_handler'),
    };
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }
  onNewConnection(): void {}
  onConnectionClosed(): void {}
  close(): void {
    for (const p of this.proxies) p.close();
  }

  /** A new connection (paused): its ClientHello read, then the chain it picks. */
  handle(c: net.Socket, id: number): void {
    const tags = { ConnectionId: id };
    // ENVOY_LOG (no connection tags), as tls_inspector.cc logs.
    this.log.filter.trace('tls inspector: new connection accepted');
    let buf: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      this.preTimeout.inc();
      this.log.connHandler.debug('listener filter times out after 15000 ms', tags);
      done();
      c.destroy();
    }, LISTENER_FILTERS_TIMEOUT_MS);
    const onData = (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      const hello = parseClientHello(buf);
      if (hello.state === 'more') return;
      done();
      c.pause();
      if (hello.state === 'too-large') {
        this.inspector.client_hello_too_large.inc();
        c.destroy();
        return;
      }
      let sni: string | undefined;
      if (hello.state === 'tls') {
        sni = hello.serverName;
        this.inspector.tls_found.inc();
        this.inspector[sni ? 'sni_found' : 'sni_not_found'].inc();
        this.inspector[hello.alpn ? 'alpn_found' : 'alpn_not_found'].inc();
        this.bytesProcessed.record(hello.bytes);
        if (sni) this.log.filter.debug(`tls:onServerName(), requestedServerName: ${sni}`);
      } else this.inspector.tls_not_found.inc();
      this.dispatch(c, id, sni, buf);
    };
    const onEnd = () => {
      done();
      c.destroy();
    };
    const done = () => {
      clearTimeout(timer);
      c.off('data', onData);
      c.off('end', onEnd);
    };
    c.on('data', onData);
    c.once('end', onEnd);
    c.resume();
  }

  private dispatch(c: net.Socket, id: number, sni: string | undefined, hello: Buffer): void {
    const chain = pickTlsChain(this.chains, sni);
    if (!chain) {
      this.noChain.inc();
      this.log.connHandler.debug(
        `closing connection from ${c.remoteAddress}:${c.remotePort}: no matching filter chain found`,
      );
      c.destroy();
      return;
    }
    const proxy = this.proxies[this.chains.indexOf(chain)];
    // What was read goes back in front: the tcp_proxy (or the TLS socket) reads it first.
    c.unshift(hello);
    if (!chain.tls) proxy.handle(c, id);
    else this.terminate(c, id, chain.tls, proxy);
  }

  /** The chain's DownstreamTlsContext on the connection, then its tcp_proxy on the plaintext. */
  private terminate(c: net.Socket, id: number, ctx: TlsChain, proxy: TcpProxy): void {
    const tags = { ConnectionId: id };
    const log = this.log.connection;
    const t = new tls.TLSSocket(c, { isServer: true, secureContext: ctx.context });
    let secure = false;
    log.debug('handshake expecting read', tags);
    t.once('secure', () => {
      secure = true;
      this.ssl?.onHandshake(t);
      log.debug('handshake complete', tags);
      proxy.handle(t, id);
    });
    t.on('error', (err: NodeJS.ErrnoException & { library?: string; reason?: string }) => {
      if (!secure) {
        this.ssl?.connection_error.inc();
        log.debug(`remote address:${c.remoteAddress}:${c.remotePort},${tlsError(err)}`, tags);
      }
      t.destroy();
    });
    // The TLS socket owns the connection now: when it closes, so does the connection the handler counts.
    t.once('close', () => c.destroy());
  }
}
