// A keep-alive HTTP/1.1 connection pool for one upstream host, shaped like Envoy's ConnPoolImplBase: ready, busy
// and connecting clients, a queue of pending streams, and the cluster's circuit breakers deciding whether a stream
// may queue and whether a new connection may be opened. The sockets are opened here (so "connecting" and
// "connected" are logged when they really happen, and "creating a new connection" once per new connection); each
// connected socket is then handed to an undici Client that speaks HTTP/1.1 on it. A cluster with an
// UpstreamTlsContext connects through tls-transport.ts: the connection counts as connected once its handshake and
// verification passed, and a failed one is a connect failure with Envoy's transport failure reason.
import net from 'node:net';
import { Client, type Dispatcher } from 'undici';
import type { Logger, LogRegistry } from '../log.ts';
import { strerror } from '../strerror.ts';
import type { Resources } from './circuit-breakers.ts';
import type { ClusterStats } from './cluster-stats.ts';
import {
  armConnectTimeout,
  CONNECT_TIMEOUT,
  countConnectionClosed,
  countConnectionOpened,
} from './connection-stats.ts';
import type { Host } from './host.ts';
import { type Pending, PendingStreams } from './pending-streams.ts';
import { connectTls, type UpstreamSslStats, type UpstreamTls } from './tls-transport.ts';

/** 'transport failure': the TLS handshake or its verification failed (Envoy: "connection failure, transport ..."). */
export type PoolFailure = 'overflow' | 'connection failure' | 'connection timeout' | 'transport failure';

export interface PoolCallbacks {
  onReady(conn: PoolStream): void;
  onFailure(reason: PoolFailure, detail: string): void;
}

export type PendingStream = Pending<PoolCallbacks>;

/** What a pool needs from its cluster (cluster.ts's Cluster is one). */
export interface PoolCluster {
  readonly logs: LogRegistry;
  readonly stats: ClusterStats;
  readonly resources: Resources;
  /** Next connection id (shared with downstream connections, as in Envoy). */
  readonly connectionIds: () => number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxRequestsPerConnection: number;
  /** A connection of this pool closed: the cluster's other pools may open one now. */
  onConnectionClosed(): void;
  /** TLS to the hosts (the cluster's UpstreamTlsContext) and its ssl.* stats. */
  readonly tls?: { config: UpstreamTls; stats: UpstreamSslStats };
}

/**
 * A stream slot a pool hands out, as the router (filters/router/attempt.ts) and the async client use it: a request is
 * dispatched on it with undici's handler interface, then it is released. HTTP/1.1: a PoolConnection here; HTTP/2: a
 * stream on a multiplexed session (http2-client.ts).
 */
export interface PoolStream {
  /** Do not reuse the connection (HTTP/1.1) after this stream. */
  noReuse: boolean;
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void;
  release(reusable: boolean): void;
}

/** A host's connection pool as the data path sees it (ConnPool for HTTP/1.1, Http2Pool for HTTP/2). */
export interface UpstreamPool {
  newStream(callbacks: PoolCallbacks, tags: Record<string, string | number>): PendingStream | undefined;
  cancel(p: PendingStream): void;
  retryPending(): void;
  close(): void;
}

export class PoolConnection implements PoolStream {
  readonly id: number;
  readonly pool: ConnPool;
  client: Client | undefined;
  socket: net.Socket;
  state: 'connecting' | 'ready' | 'busy' | 'closed' = 'connecting';
  requests = 0;
  /** The upstream said `connection: close`, or a request failed on it: do not reuse. */
  noReuse = false;
  readonly openedAt = performance.now();

  constructor(pool: ConnPool, id: number, socket: net.Socket) {
    this.pool = pool;
    this.id = id;
    this.socket = socket;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    this.requests++;
    this.client!.dispatch(opts, handler);
  }

  /** The stream on this connection is finished; the connection goes back to the pool (or closes). */
  release(reusable: boolean): void {
    this.pool.onStreamDone(this, reusable);
  }
}

export class ConnPool implements UpstreamPool {
  readonly host: Host;
  readonly cluster: PoolCluster;
  private readonly ready: PoolConnection[] = [];
  private readonly busy = new Set<PoolConnection>();
  private readonly connecting = new Set<PoolConnection>();
  private readonly pending: PendingStreams<PoolCallbacks>;
  private readonly log: Logger;
  private readonly clientLog: Logger;
  private readonly connLog: Logger;
  private closed = false;

  constructor(cluster: PoolCluster, host: Host) {
    this.cluster = cluster;
    this.host = host;
    this.log = cluster.logs.logger('pool');
    this.clientLog = cluster.logs.logger('client');
    this.connLog = cluster.logs.logger('connection');
    this.pending = new PendingStreams(cluster);
  }

  get activeConnections(): number {
    return this.ready.length + this.busy.size + this.connecting.size;
  }

  get idle(): boolean {
    return this.busy.size === 0 && this.connecting.size === 0 && this.pending.length === 0;
  }

  /** Asks for a connection for one stream: immediate when one is ready, else queued (Envoy's newStream). */
  newStream(callbacks: PoolCallbacks, tags: Record<string, string | number>): PendingStream | undefined {
    while (this.ready.length > 0) {
      const conn = this.ready.pop()!;
      if (conn.state !== 'ready' || conn.socket.destroyed) continue;
      if (this.log.on('debug')) this.log.debug('using existing fully connected connection', { ConnectionId: conn.id });
      this.attach(conn, callbacks);
      return undefined;
    }
    const p = this.pending.enqueue(callbacks, tags);
    if (!p) {
      this.log.debug('max pending streams overflow', tags);
      callbacks.onFailure('overflow', 'overflow');
      return undefined;
    }
    if (this.log.on('debug')) {
      this.log.debug(
        `queueing stream due to no available connections (ready=${this.ready.length} busy=${this.busy.size} connecting=${this.connecting.size})`,
        tags,
      );
    }
    this.tryCreateConnections();
    return p;
  }

  /** The downstream went away while waiting for a connection. */
  cancel(p: PendingStream): void {
    this.pending.cancel(p);
  }

  private tryCreateConnections(): void {
    // One new connection per pending stream not already covered by a connection in progress.
    while (this.pending.length > this.connecting.size) {
      if (!this.cluster.resources.canConnect()) {
        this.cluster.stats.upstream_cx_overflow.inc();
        this.log.debug('max connections overflow: the stream waits for a busy connection');
        return;
      }
      this.log.debug(`creating a new connection (connecting=${this.connecting.size})`);
      this.connect();
    }
  }

  private connect(): void {
    const c = this.cluster;
    const id = c.connectionIds();
    const tags = { ConnectionId: id };
    this.clientLog.debug('connecting', tags);
    this.connLog.debug(`connecting to ${this.host.key}`, tags);
    const socket = c.tls
      ? connectTls(this.host, c.tls.config, c.tls.stats, this.connLog, tags)
      : net.connect({ host: this.host.address, port: this.host.port, noDelay: true });
    const conn = new PoolConnection(this, id, socket);
    this.connecting.add(conn);
    c.resources.connections++;
    countConnectionOpened(c.stats, this.host, 'http1');
    const timer = armConnectTimeout(c.stats, c.connectTimeoutMs, socket, () =>
      this.connLog.debug('connect timeout', tags),
    );
    socket.once(c.tls ? 'secureConnect' : 'connect', () => {
      if (socket.destroyed) return; // the TLS verification failed: the error handler below deals with it
      clearTimeout(timer);
      this.connecting.delete(conn);
      c.stats.upstream_cx_connect_ms.record(performance.now() - conn.openedAt);
      this.clientLog.debug('connected', tags);
      if (this.closed) {
        socket.destroy();
        return;
      }
      conn.client = this.makeClient(conn);
      conn.state = 'ready';
      this.onReady(conn);
    });
    socket.once('error', (err: NodeJS.ErrnoException & { transportFailure?: string }) => {
      if (conn.state !== 'connecting') return;
      clearTimeout(timer);
      this.connecting.delete(conn);
      conn.state = 'closed';
      const timeout = err.code === CONNECT_TIMEOUT;
      c.stats.upstream_cx_connect_fail.inc();
      this.host.stats.cx_connect_fail++;
      const tlsFailure = !timeout ? err.transportFailure : undefined;
      const detail = timeout ? 'connection timeout' : (tlsFailure ?? `delayed connect error: ${describeErrno(err)}`);
      if (!tlsFailure) this.connLog.debug(`delayed connection error: ${describeErrno(err)}`, tags);
      this.log.debug(`client disconnected, failure reason: ${detail}`, tags);
      // Envoy purges the pending streams when a connection fails and nothing else is in progress (before the
      // freed slot could start another attempt for them).
      const failed = this.connecting.size === 0 ? this.pending.drain() : [];
      this.closeConnection(conn, 'remote');
      const reason = timeout ? 'connection timeout' : tlsFailure ? 'transport failure' : 'connection failure';
      for (const p of failed) p.callbacks.onFailure(reason, detail);
    });
    socket.once('close', () => {
      if (conn.state === 'connecting') return; // the error handler above deals with it
      if (conn.state !== 'closed') {
        this.connLog.debug('remote close', tags);
        this.closeConnection(conn, 'remote');
      }
    });
  }

  private makeClient(conn: PoolConnection): Client {
    const c = this.cluster;
    let handed = false;
    const client = new Client(`http://${this.host.key}`, {
      connect: (_opts, cb) => {
        // The socket is already connected; undici asking again means it wants a fresh one: this connection is done.
        // undici must get the answer asynchronously (it is inside its own resume loop when it asks).
        if (handed || conn.socket.destroyed) {
          process.nextTick(() =>
            cb(Object.assign(new Error('upstream connection closed'), { code: 'UND_ERR_SOCKET' }), null),
          );
          return;
        }
        handed = true;
        process.nextTick(() => cb(null, conn.socket));
      },
      keepAliveTimeout: c.idleTimeoutMs,
      keepAliveMaxTimeout: c.idleTimeoutMs,
      keepAliveTimeoutThreshold: 1000,
      headersTimeout: 0,
      bodyTimeout: 0,
      pipelining: 1,
      strictContentLength: false,
      maxRequestsPerClient: c.maxRequestsPerConnection || undefined,
    });
    client.on('disconnect', () => {
      if (conn.state !== 'closed') {
        this.connLog.debug('closing socket: 1', { ConnectionId: conn.id });
        this.closeConnection(conn, 'remote');
      }
    });
    return client;
  }

  private onReady(conn: PoolConnection): void {
    // A freshly connected (or released) connection takes the oldest pending stream.
    while (this.pending.length > 0) {
      const p = this.pending.shift()!;
      if (p.cancelled) continue;
      if (this.log.on('debug')) this.log.debug('attaching to next stream', { ConnectionId: conn.id });
      this.attach(conn, p.callbacks);
      return;
    }
    conn.state = 'ready';
    this.ready.push(conn);
  }

  private attach(conn: PoolConnection, callbacks: PoolCallbacks): void {
    conn.state = 'busy';
    this.busy.add(conn);
    if (this.log.on('debug')) this.log.debug('creating stream', { ConnectionId: conn.id });
    callbacks.onReady(conn);
  }

  onStreamDone(conn: PoolConnection, reusable: boolean): void {
    if (conn.state !== 'busy') return;
    this.busy.delete(conn);
    const max = this.cluster.maxRequestsPerConnection;
    if (!reusable || conn.noReuse || conn.socket.destroyed || this.closed || (max > 0 && conn.requests >= max)) {
      this.closeConnection(conn, 'local');
      this.tryCreateConnections();
      return;
    }
    if (this.log.on('debug')) this.log.debug('response complete', { ConnectionId: conn.id });
    this.onReady(conn);
  }

  private closeConnection(conn: PoolConnection, by: 'local' | 'remote'): void {
    const wasBusy = this.busy.delete(conn);
    this.connecting.delete(conn);
    const i = this.ready.indexOf(conn);
    if (i >= 0) this.ready.splice(i, 1);
    conn.state = 'closed';
    if (by === 'local') this.connLog.debug('closing data_to_write=0 type=1', { ConnectionId: conn.id });
    if (conn.client) {
      const client = conn.client;
      conn.client = undefined;
      client.destroy().catch(() => {});
    } else {
      conn.socket.destroy();
    }
    this.finishClose(conn, by);
    if (wasBusy && this.pending.length > 0) this.tryCreateConnections();
  }

  private readonly finished = new WeakSet<PoolConnection>();

  private finishClose(conn: PoolConnection, by: 'local' | 'remote'): void {
    if (this.finished.has(conn)) return;
    this.finished.add(conn);
    const c = this.cluster;
    c.resources.connections--;
    countConnectionClosed(c.stats, this.host, conn.openedAt);
    (by === 'local' ? c.stats.upstream_cx_destroy_local : c.stats.upstream_cx_destroy_remote).inc();
    this.clientLog.debug(`disconnect. resetting 0 pending requests`, { ConnectionId: conn.id });
    // Another pool of the cluster may be waiting for a connection slot.
    c.onConnectionClosed();
  }

  /** Called by the cluster when a connection slot frees elsewhere. */
  retryPending(): void {
    if (this.pending.length > 0) this.tryCreateConnections();
  }

  /** Closes every connection; fails pending streams. */
  close(): void {
    this.closed = true;
    for (const p of this.pending.drain()) p.callbacks.onFailure('connection failure', 'cluster removed');
    for (const conn of [...this.ready, ...this.connecting]) this.closeConnection(conn, 'local');
    // Busy connections close when their stream ends (release sees `closed`).
  }
}

/** A connect error as the pool logs it: strerror's text, else the code, else the message. */
export function describeErrno(err: NodeJS.ErrnoException): string {
  return strerror(err) ?? err.code ?? err.message;
}
