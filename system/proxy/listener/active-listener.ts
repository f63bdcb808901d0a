// A listener that serves: its socket (kept while listeners with its address come and go; requests, connections and
// datagrams that arrive before the listener is warm wait in it): an HTTP server for the connection manager (an HTTPS
// one, node:tls picking the filter chain's certificate by SNI, when the listener terminates TLS), a plain
// TCP server for tcp_proxy (half-open connections allowed), a UDP socket for udp_proxy; the ActiveListener it
// currently hands them to (config, its HCM / tcp_proxy / udp_proxy, listener.<address>.* stats), and the connection
// handler (Envoy's ConnectionHandlerImpl): connection ids, idle timeouts, per-listener connection stats and the
// conn_handler/connection debug lines.
import dgram from 'node:dgram';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type tls from 'node:tls';
import { timestampString } from '../../shared/envoy/protojson.ts';
import { ConfigError } from '../config/errors.ts';
import type { HcmRuntime } from '../http/hcm.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { TcpProxy } from '../network/tcp-proxy.ts';
import type { SniTcpProxy } from '../network/tls-inspector.ts';
import type { UdpProxy } from '../network/udp-proxy.ts';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats.ts';
import { strerror } from '../strerror.ts';
import type { ListenerSpec } from './listener-config.ts';
import { SslStats } from './ssl-stats.ts';
import { pickTlsChain, tlsError } from './tls-config.ts';

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
    // Host is checked by the connection manager, as in Envoy (an absolute-form URI supplies it).
    const opts = { keepAliveTimeout: 0, requestTimeout: 0, headersTimeout: 60_000, requireHostHeader: false };
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => handler.onRequest(this, req, res);
    let server: http.Server | https.Server;
    if (kind === 'https') {
      // The filter chain by SNI (tls-config.ts); none: the handshake fails and the connection is closed, as Envoy
      // closes a connection no filter chain matches. Clients without SNI get the default context (setSecureContext
      // in activate): the default chain's certificate, or none, which fails their handshake.
      const SNICallback = (name: string, cb: (err: Error | null, ctx?: tls.SecureContext) => void) =>
        this.whenActive(() => {
          const chain = pickTlsChain(this.current?.spec.tls ?? [], name);
          if (chain) cb(null, chain.context);
          else cb(new Error(`no filter chain matches server name ${name}`));
        });
      server = https.createServer({ ...opts, SNICallback, ALPNProtocols: ['http/1.1'] }, onRequest);
      server.on('secureConnection', (c: tls.TLSSocket) => {
        this.current?.ssl?.onHandshake(c);
        handler.onHandshake(handler.onConnection(this, c));
      });
      server.on('tlsClientError', (err: Error, c: tls.TLSSocket) => {
        this.current?.ssl?.connection_error.inc();
        handler.onTlsError(c, err);
        c.destroy();
      });
    } else {
      server = http.createServer(opts, onRequest);
      server.on('connection', (c: net.Socket) => handler.onConnection(this, c));
    }
    this.server = server;
    // CONNECT: Node hands over the socket; the connection manager answers on it and the connection closes after.
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
      const res = new http.ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket);
      res.once('finish', () => socket.end());
      handler.onRequest(this, req, res);
    });
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
    if (this.server instanceof https.Server) {
      const fallback = pickTlsChain(l.spec.tls ?? [], undefined);
      this.server.setSecureContext(fallback ? fallback.options : {});
    }
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
    this.server!.close();
    if (this.server instanceof http.Server || this.server instanceof https.Server) this.server.closeIdleConnections();
    else for (const c of this.connections) c.destroy();
  }

  /** Closes it now, with every connection (shutdown). */
  shutdown(): Promise<void> {
    this.closed = true;
    if (this.udp) return new Promise((resolve) => this.udp!.close(() => resolve()));
    return new Promise((resolve) => {
      this.server!.close(() => resolve());
      if (this.server instanceof http.Server || this.server instanceof https.Server) this.server.closeAllConnections();
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

/** Envoy's connection handler for every listener socket. */
export class ConnectionHandler {
  private readonly connectionIds: () => number;
  private readonly connHandlerLog: Logger;
  private readonly connectionLog: Logger;

  constructor(logs: LogRegistry, connectionIds: () => number) {
    this.connectionIds = connectionIds;
    this.connHandlerLog = logs.logger('conn_handler');
    this.connectionLog = logs.logger('connection');
  }

  /** A new downstream connection: its id (returned), idle timeout, the listener's connection stats and debug lines. */
  onConnection(sock: ListenerSocket, c: net.Socket): number {
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
      c.setTimeout(idle, () => {
        this.connectionLog.debug('idle timeout', tags);
        c.destroy();
      });
    }
    l?.stats.downstream_cx_total.inc();
    l?.stats.downstream_cx_active.add(1);
    l?.network.onNewConnection();
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
        l.network.onConnectionClosed(len, remoteClosed);
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

  /** A request: to the HCM of the socket's active listener, once there is one. */
  onRequest(sock: ListenerSocket, req: http.IncomingMessage, res: http.ServerResponse): void {
    const id = (req.socket as net.Socket & { gwlabConnId?: number }).gwlabConnId ?? 0;
    if (sock.closed) res.shouldKeepAlive = false;
    sock.whenActive(() => sock.current!.hcm!.handle(req, res, id));
  }
}
