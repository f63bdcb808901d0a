// A listener that serves: its socket (kept while listeners with its address come and go; requests, connections and
// datagrams that arrive before the listener is warm wait in it): an HTTP server for the connection manager (an HTTPS
// one, node:tls picking the filter chain's certificate by SNI, when the listener terminates TLS), a plain
// TCP server for tcp_proxy (half-open connections allowed), a UDP socket for udp_proxy; the ActiveListener it
// currently hands them to (config, its HCM / tcp_proxy / udp_proxy, listener.<address>.* stats), and the connection
// handler (Envoy's ConnectionHandlerImpl): connection ids, idle timeouts, per-listener connection stats and the
// conn_handler/connection debug lines.
import dgram from 'node:dgram';
import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { timestampString } from '../../shared/envoy/protojson.ts';
import { ConfigError } from '../config/errors.ts';
import type { DownstreamUpgrade } from '../filters/filter-api.ts';
import type { HcmRuntime } from '../http/hcm.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { TcpProxy } from '../network/tcp-proxy.ts';
import type { SniTcpProxy } from '../network/tls-inspector.ts';
import type { UdpProxy } from '../network/udp-proxy.ts';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats.ts';
import { strerror } from '../strerror.ts';
import { chainOf, clientCertError, isNoClientCertError } from '../tls/client-cert.ts';
import { SslStats } from '../tls/ssl-stats.ts';
import { pickTlsChain, tlsError } from '../tls/tls-config.ts';
import { type CodecOwner, HttpCodecServers, type HttpProtocol } from './http-codec.ts';
import type { ListenerSpec } from './listener-config.ts';

/** What serves a listener's traffic: the HTTP connection manager, a tcp_proxy or a udp_proxy. */
export type NetworkRuntime = HcmRuntime | TcpProxy | SniTcpProxy | UdpProxy;

/** A listening socket; kept while listeners with its address (and kind) come and go. */
export class ListenerSocket {
  /** The TCP server (HTTP or tcp_proxy); undefined for a UDP socket. */
  readonly server: net.Server | undefined;
  readonly udp: dgram.Socket | undefined;
  readonly kind: ListenerSpec['kind'];
  readonly address: string;
  port: number;
  current: ActiveListener | undefined;
  private readonly queued: Array<() => void> = [];
  readonly connections = new Set<net.Socket>();
  /** HTTP listeners: the HTTP/1.1 and HTTP/2 codec servers behind `server`. */
  readonly codecs: HttpCodecServers | undefined;

  constructor(address: string, port: number, handler: ConnectionHandler, kind: ListenerSpec['kind'] = 'http') {
    this.address = address;
    this.port = port;
    this.kind = kind;
    if (kind === 'udp') {
      this.udp = dgram.createSocket({ type: net.isIPv6(address) ? 'udp6' : 'udp4' });
      this.udp.on('message', (msg, rinfo) =>
        this.whenActive(() => (this.current?.network as UdpProxy | undefined)?.onDatagram(this.udp!, msg, rinfo)),
      );
      return;
    }
    if (kind === 'tcp') {
      this.server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (c) => {
        const id = handler.onConnection(this, c);
        this.whenActive(() => (this.current!.network as TcpProxy | SniTcpProxy).handle(c, id));
      });
      return;
    }
    const codecs = new HttpCodecServers(this.codecOwner(handler), kind === 'https');
    this.codecs = codecs;
    this.server = codecs.front;
  }

  /** What the HTTP codec servers see of this socket (http-codec.ts). */
  private codecOwner(handler: ConnectionHandler): CodecOwner {
    return {
      whenActive: (f) => this.whenActive(f),
      hcmConfig: () => this.current?.hcm?.config,
      tlsChains: () => this.current?.spec.tls ?? [],
      onConnection: (c) => {
        const id = handler.onConnection(this, c, null);
        if (c instanceof tls.TLSSocket) handler.onHandshake(id);
      },
      onCodec: (c, protocol) => handler.onCodec(c, protocol),
      onRequest: (req, res, upgrade) => handler.onRequest(this, req, res, upgrade),
      onHandshake: (c) => this.current?.ssl?.onHandshake(c),
      onTlsError: (c, err) => {
        this.current?.ssl?.connection_error.inc();
        if (isNoClientCertError(err)) this.current?.ssl?.fail_verify_no_cert.inc();
        handler.onTlsError(c, err);
      },
      onClientCert: (c, check) => {
        const ssl = this.current?.ssl;
        if (check.failure) {
          ssl?.[check.failure].inc();
          ssl?.connection_error.inc();
          handler.onTlsError(c, clientCertError(check));
        } else if (check.untrusted) ssl?.fail_verify_error.inc();
      },
      http2Stat: (name) => handler.stats.counter(`http2.${name}`),
    };
  }

  get key(): string {
    return socketKey(this.kind, this.address, this.port);
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        reject(new ConfigError(`cannot bind '${this.address}:${this.port}': ${strerror(err) ?? err.message}`));
      };
      if (this.udp) {
        const udp = this.udp;
        udp.once('error', onError);
        udp.bind({ address: this.address, port: this.port, exclusive: true }, () => {
          udp.off('error', onError);
          this.port = udp.address().port;
          resolve();
        });
        return;
      }
      const server = this.server!;
      server.once('error', onError);
      server.listen({ host: this.address, port: this.port, exclusive: true }, () => {
        server.off('error', onError);
        this.port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  }

  /** Requests that arrive before the listener is warm wait here, like connections in a backlog. */
  whenActive(f: () => void): void {
    if (this.current) f();
    else this.queued.push(f);
  }

  activate(l: ActiveListener): void {
    this.current = l;
    if (this.server instanceof tls.Server) {
      const fallback = pickTlsChain(l.spec.tls ?? [], undefined);
      this.server.setSecureContext(fallback ? fallback.options : {});
      // Clients without SNI get the default chain: its client certificate request (client-cert.ts).
      (this.server as tls.Server & { requestCert?: boolean }).requestCert = !!fallback?.clientCert;
    }
    this.codecs?.configure(l.hcm?.config, l.spec.tls?.[0]?.alpn);
    for (const f of this.queued.splice(0)) f();
  }

  /** Stops accepting; idle connections close now, busy ones after their response (draining). */
  closed = false;
  close(): void {
    this.closed = true;
    if (this.udp) {
      this.udp.close();
      return;
    }
    if (this.codecs) this.codecs.close();
    else {
      this.server!.close();
      for (const c of this.connections) c.destroy();
    }
  }

  /** Closes it now, with every connection (shutdown). */
  shutdown(): Promise<void> {
    this.closed = true;
    if (this.udp) return new Promise((resolve) => this.udp!.close(() => resolve()));
    return new Promise((resolve) => {
      if (this.codecs) this.codecs.shutdown(resolve);
      else this.server!.close(() => resolve());
      for (const c of this.connections) c.destroy();
    });
  }
}

/** Sockets are shared by address: TCP (HTTP and tcp_proxy) and UDP ones apart. */
export function socketKey(kind: ListenerSpec['kind'], address: string, port: number): string {
  return `${kind === 'udp' ? 'udp:' : ''}${address}:${port}`;
}

interface ListenerStats {
  downstream_cx_total: Counter;
  downstream_cx_active: Gauge;
  downstream_cx_destroy: Counter;
  downstream_cx_length_ms: Histogram;
}

export class ActiveListener {
  readonly spec: ListenerSpec;
  /** TLS listeners: their ssl.* stats. */
  readonly ssl: SslStats | undefined;
  readonly network: NetworkRuntime;
  readonly socket: ListenerSocket;
  readonly versionInfo: string;
  readonly lastUpdated: string;
  readonly addedViaApi: boolean;
  readonly stats: ListenerStats;
  readonly statPrefix: string;

  constructor(
    spec: ListenerSpec,
    network: NetworkRuntime,
    socket: ListenerSocket,
    version: string,
    addedViaApi: boolean,
    statPrefix: string,
    stats: StatsStore,
  ) {
    this.spec = spec;
    this.network = network;
    this.socket = socket;
    this.versionInfo = version;
    this.lastUpdated = timestampString(Date.now());
    this.addedViaApi = addedViaApi;
    this.statPrefix = statPrefix;
    this.stats = {
      downstream_cx_total: stats.counter(statPrefix + 'downstream_cx_total'),
      downstream_cx_active: stats.gauge(statPrefix + 'downstream_cx_active'),
      downstream_cx_destroy: stats.counter(statPrefix + 'downstream_cx_destroy'),
      downstream_cx_length_ms: stats.histogram(statPrefix + 'downstream_cx_length_ms'),
    };
    this.ssl = spec.kind === 'https' ? new SslStats(statPrefix, stats) : undefined;
  }

  /** Its HTTP connection manager; undefined for a TCP or UDP proxy listener. */
  get hcm(): HcmRuntime | undefined {
    return 'kind' in this.network ? undefined : this.network;
  }
}

/** A downstream socket with what the connection handler keeps on it. */
type CodecSocket = net.Socket & {
  gwlabConnId?: number;
  gwlabProtocol?: HttpProtocol;
  gwlabListener?: ActiveListener;
};

/** Envoy's connection handler for every listener socket. */
export class ConnectionHandler {
  private readonly connectionIds: () => number;
  private readonly connHandlerLog: Logger;
  private readonly connectionLog: Logger;

  readonly stats: StatsStore;

  constructor(logs: LogRegistry, connectionIds: () => number, stats: StatsStore) {
    this.connectionIds = connectionIds;
    this.stats = stats;
    this.connHandlerLog = logs.logger('conn_handler');
    this.connectionLog = logs.logger('connection');
  }

  /**
   * A new downstream connection: its id (returned), idle timeout, the listener's connection stats and debug lines.
   * `protocol` null: an HTTP connection whose codec is chosen later (onCodec; Envoy creates it on the first bytes).
   */
  onConnection(sock: ListenerSocket, c: net.Socket, protocol?: HttpProtocol | null): number {
    const id = this.connectionIds();
    (c as net.Socket & { gwlabConnId?: number }).gwlabConnId = id;
    const opened = performance.now();
    sock.connections.add(c);
    c.setNoDelay(true);
    const tags = { ConnectionId: id };
    if (this.connHandlerLog.on('debug')) {
      this.connHandlerLog.debug(`new connection from ${c.remoteAddress}:${c.remotePort}`, tags);
    }
    const l = sock.current;
    const idle = l?.spec.idleTimeoutMs ?? 3_600_000;
    if (idle > 0) {
      // Envoy's idle_timeout: no active stream for that long (an HTTP/1 request in flight keeps the connection).
      // (A listener of its own: setTimeout's callback would be a one-time listener, gone after a busy period.)
      c.setTimeout(idle);
      c.on('timeout', () => {
        if ((c as { gwlabActiveStreams?: number }).gwlabActiveStreams) return;
        this.connectionLog.debug('idle timeout', tags);
        c.destroy();
      });
    }
    l?.stats.downstream_cx_total.inc();
    l?.stats.downstream_cx_active.add(1);
    const conn = c as CodecSocket;
    conn.gwlabListener = l;
    if (protocol !== null) {
      conn.gwlabProtocol = protocol ?? 'http1';
      l?.network.onNewConnection(conn.gwlabProtocol);
    }
    let remoteClosed = false;
    c.once('end', () => {
      remoteClosed = true;
    });
    c.once('close', () => {
      sock.connections.delete(c);
      const len = performance.now() - opened;
      if (remoteClosed) this.connectionLog.debug('remote close', tags);
      this.connectionLog.debug(`closing socket: ${remoteClosed ? 0 : 1}`, tags);
      this.connHandlerLog.debug('adding to cleanup list', tags);
      if (l) {
        l.stats.downstream_cx_active.sub(1);
        l.stats.downstream_cx_destroy.inc();
        l.stats.downstream_cx_length_ms.record(len);
        if (conn.gwlabProtocol) l.network.onConnectionClosed(len, remoteClosed, conn.gwlabProtocol);
      }
    });
    return id;
  }

  /** Envoy's SSL socket's debug lines (ssl_socket.cc): a completed handshake, a failed one with its reason. */
  onHandshake(id: number): void {
    this.connectionLog.debug('handshake complete', { ConnectionId: id });
  }
  onTlsError(c: net.Socket, err: Error): void {
    if (this.connectionLog.on('debug'))
      this.connectionLog.debug(`remote address:${c.remoteAddress}:${c.remotePort},${tlsError(err)}`);
  }

  /** The codec of an HTTP connection is known (ALPN or the first bytes): the HCM counts it. */
  onCodec(c: net.Socket, protocol: HttpProtocol): void {
    const conn = c as CodecSocket;
    if (conn.gwlabProtocol) return;
    conn.gwlabProtocol = protocol;
    conn.gwlabListener?.network.onNewConnection(protocol);
  }

  /** A request: to the HCM of the socket's active listener, once there is one. */
  onRequest(
    sock: ListenerSocket,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    upgrade?: DownstreamUpgrade,
  ): void {
    const id = (req.socket as net.Socket & { gwlabConnId?: number }).gwlabConnId ?? 0;
    if (sock.closed && req.httpVersion !== '2.0') res.shouldKeepAlive = false;
    sock.whenActive(() => {
      const l = sock.current!;
      // HTTP/2: the session's socket (req.socket is a proxy of it).
      const conn = (req as { stream?: { session?: { socket?: net.Socket } } }).stream?.session?.socket ?? req.socket;
      const chain =
        l.spec.tls && conn instanceof tls.TLSSocket ? chainOf(conn, pickTlsChain(l.spec.tls, undefined)) : undefined;
      l.hcm!.handle(req, res, id, upgrade, chain?.routeConfigName);
    });
  }
}
