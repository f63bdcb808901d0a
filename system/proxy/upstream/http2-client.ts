// HTTP/2 to an upstream host (Envoy's Http2 ConnPoolImpl, source/common/http/http2/conn_pool.cc): one multiplexed
// session per host (h2c with prior knowledge in the clear, node:http2), streams queued while it connects or while
// the peer's SETTINGS_MAX_CONCURRENT_STREAMS are all in use, a new session once the old one is gone or got GOAWAY.
// Each stream is handed to the router (filters/router/attempt.ts) and the async client with the same dispatch
// interface undici's HTTP/1.1 client has (pool.ts PoolStream), so retries, timeouts, back-pressure, trailers
// (gRPC's grpc-status) and reset reasons read the same for both protocols. The session carries the cluster's
// http2_protocol_options (SETTINGS, the connection window). Stats: the cluster's upstream_cx_* with
// upstream_cx_http2_total, as Envoy counts them.
import http2 from 'node:http2';
import net from 'node:net';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Http2Options } from '../config/http2-options.ts';
import type { Logger } from '../log.ts';
import {
  armConnectTimeout,
  CONNECT_TIMEOUT,
  countConnectionClosed,
  countConnectionOpened,
} from './connection-stats.ts';
import type { Host } from './host.ts';
import { PendingStreams } from './pending-streams.ts';
import {
  describeErrno,
  type PendingStream,
  type PoolCallbacks,
  type PoolCluster,
  type PoolStream,
  type UpstreamPool,
} from './pool.ts';

/** Request headers HTTP/2 does not carry (RFC 9113 §8.2.2); `te` only as `trailers`. */
const CONNECTION_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

type Session = http2.ClientHttp2Session & { gwlabId?: number; gwlabOpenedAt?: number };

export class Http2Pool implements UpstreamPool {
  private readonly cluster: PoolCluster;
  private readonly host: Host;
  private readonly options: Http2Options;
  private session: Session | undefined;
  private ready = false;
  private active = 0;
  private readonly pending: PendingStreams<PoolCallbacks>;
  private readonly log: Logger;
  private readonly connLog: Logger;
  private closed = false;

  constructor(cluster: PoolCluster, host: Host, options: Http2Options) {
    this.cluster = cluster;
    this.host = host;
    this.options = options;
    this.log = cluster.logs.logger('pool');
    this.connLog = cluster.logs.logger('connection');
    this.pending = new PendingStreams(cluster);
  }

  newStream(callbacks: PoolCallbacks, tags: Record<string, string | number>): PendingStream | undefined {
    const s = this.session;
    if (s && this.ready && !s.closed && !s.destroyed && this.active < this.peerMaxStreams(s)) {
      this.attach(s, callbacks);
      return undefined;
    }
    const p = this.pending.enqueue(callbacks, tags);
    if (!p) {
      callbacks.onFailure('overflow', 'overflow');
      return undefined;
    }
    if (!s || s.closed || s.destroyed) this.connect();
    return p;
  }

  cancel(p: PendingStream): void {
    this.pending.cancel(p);
  }

  retryPending(): void {
    if (this.pending.length > 0 && !this.session) this.connect();
  }

  close(): void {
    this.closed = true;
    for (const p of this.pending.drain()) p.callbacks.onFailure('connection failure', 'cluster removed');
    // Streams in flight finish; the session closes after them (GOAWAY).
    this.session?.close();
  }

  private peerMaxStreams(s: Session): number {
    return s.remoteSettings?.maxConcurrentStreams ?? 100;
  }

  private attach(s: Session, callbacks: PoolCallbacks): void {
    this.active++;
    if (this.log.on('debug')) this.log.debug('creating stream', { ConnectionId: s.gwlabId ?? 0 });
    callbacks.onReady(new Http2PoolStream(this, s));
  }

  /** A stream of the session finished: a queued one may start. */
  streamDone(): void {
    this.active--;
    this.drain();
  }

  private drain(): void {
    const s = this.session;
    while (this.pending.length > 0 && s && this.ready && this.active < this.peerMaxStreams(s)) {
      const p = this.pending.shift()!;
      if (p.cancelled) continue;
      this.attach(s, p.callbacks);
    }
  }

  private connect(): void {
    const c = this.cluster;
    if (this.closed) return;
    if (!c.resources.canConnect()) {
      c.stats.upstream_cx_overflow.inc();
      return;
    }
    const id = c.connectionIds();
    const tags = { ConnectionId: id };
    this.log.debug('creating a new connection (connecting=0)');
    this.connLog.debug(`connecting to ${this.host.key}`, tags);
    const socket = net.connect({ host: this.host.address, port: this.host.port, noDelay: true });
    const o = this.options;
    const session: Session = http2.connect(`http://${this.host.key}`, {
      createConnection: () => socket,
      settings: {
        initialWindowSize: o.initialStreamWindowSize,
        maxConcurrentStreams: Math.min(o.maxConcurrentStreams, 2 ** 32 - 1),
        headerTableSize: o.hpackTableSize,
        enablePush: false,
      },
    });
    session.gwlabId = id;
    session.gwlabOpenedAt = performance.now();
    this.session = session;
    this.ready = false;
    c.resources.connections++;
    countConnectionOpened(c.stats, this.host, 'http2');
    let connected = false;
    const timer = armConnectTimeout(c.stats, c.connectTimeoutMs, socket, () =>
      this.connLog.debug('connect timeout', tags),
    );
    socket.once('connect', () => {
      clearTimeout(timer);
      connected = true;
      c.stats.upstream_cx_connect_ms.record(performance.now() - session.gwlabOpenedAt!);
    });
    session.once('connect', () => {
      if (this.session !== session) return;
      if (o.initialConnectionWindowSize !== 65_535) session.setLocalWindowSize(o.initialConnectionWindowSize);
      if (c.idleTimeoutMs > 0) session.setTimeout(c.idleTimeoutMs, () => session.close());
      this.ready = true;
      this.drain();
    });
    let failure: NodeJS.ErrnoException | undefined;
    socket.once('error', (err: NodeJS.ErrnoException) => {
      failure ??= err;
    });
    session.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= err;
    });
    // GOAWAY: streams in flight finish; new ones get a new session.
    session.once('goaway', () => {
      if (this.session === session) this.session = undefined;
    });
    session.once('close', () => {
      clearTimeout(timer);
      if (this.session === session) this.session = undefined;
      c.resources.connections--;
      countConnectionClosed(c.stats, this.host, session.gwlabOpenedAt!);
      (failure || !this.closed ? c.stats.upstream_cx_destroy_remote : c.stats.upstream_cx_destroy_local).inc();
      if (!connected) {
        c.stats.upstream_cx_connect_fail.inc();
        this.host.stats.cx_connect_fail++;
        const timeout = failure?.code === CONNECT_TIMEOUT;
        const why = failure ? describeErrno(failure) : 'connection closed';
        const detail = timeout ? 'connection timeout' : `delayed connect error: ${why}`;
        this.connLog.debug(`delayed connection error: ${why}`, tags);
        const failed = this.pending.drain();
        c.onConnectionClosed();
        for (const p of failed) {
          if (!p.cancelled) p.callbacks.onFailure(timeout ? 'connection timeout' : 'connection failure', detail);
        }
        return;
      }
      this.connLog.debug('closing socket: 1', tags);
      c.onConnectionClosed();
      if (this.pending.length > 0) this.connect();
    });
  }
}

/** One stream on a pooled session, driven with undici's dispatch handler callbacks. */
class Http2PoolStream implements PoolStream {
  noReuse = false;
  private readonly pool: Http2Pool;
  private readonly session: http2.ClientHttp2Session;
  private released = false;

  constructor(pool: Http2Pool, session: http2.ClientHttp2Session) {
    this.pool = pool;
    this.session = session;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const headers: http2.OutgoingHttpHeaders = {
      ':method': opts.method,
      ':path': opts.path,
      ':scheme': 'http',
    };
    const src = (opts.headers ?? {}) as Record<string, string | string[] | undefined>;
    if (src.host !== undefined) headers[':authority'] = String(src.host);
    for (const k in src) {
      const v = src[k];
      if (v === undefined || CONNECTION_HEADERS.has(k)) continue;
      if (k === 'te' && v !== 'trailers') continue;
      headers[k] = v;
    }
    const body = opts.body as Buffer | Readable | null | undefined;
    const streamed = body instanceof Readable ? body : undefined;
    let aborted = false;
    let paused = false;
    let reason: Error | null = null;
    let ended = false;
    let trailers: Record<string, string | string[] | undefined> = {};
    let req: http2.ClientHttp2Stream;
    const controller: Dispatcher.DispatchController = {
      get aborted() {
        return aborted;
      },
      get paused() {
        return paused;
      },
      get reason() {
        return reason;
      },
      abort(err: Error) {
        if (aborted) return;
        aborted = true;
        reason = err;
        if (streamed) streamed.unpipe(req);
        if (req && !req.destroyed) req.close(http2.constants.NGHTTP2_CANCEL);
      },
      pause() {
        paused = true;
        req?.pause();
      },
      resume() {
        paused = false;
        req?.resume();
      },
    };
    try {
      const empty = !body || (!streamed && (body as Buffer).length === 0);
      req = this.session.request(headers, { endStream: empty });
    } catch (err) {
      handler.onResponseError?.(controller, Object.assign(err as Error, { code: 'UND_ERR_SOCKET' }));
      return;
    }
    handler.onRequestStart?.(controller, {});
    if (aborted) return;
    if (streamed) streamed.pipe(req);
    else if (body && (body as Buffer).length > 0) req.end(body);
    req.on('response', (h, flags: number) => {
      const status = Number(h[':status']);
      const out: Record<string, string | string[] | undefined> = {};
      for (const k in h) if (k.charCodeAt(0) !== 58 /* ':' */) out[k] = h[k] as string | string[];
      // Headers that end the stream (gRPC trailers-only): the router passes that on (attempt.ts reads it).
      (controller as { endStream?: boolean }).endStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      if (!aborted) handler.onResponseStart?.(controller, status, out);
    });
    req.on('data', (chunk: Buffer) => {
      if (!aborted) handler.onResponseData?.(controller, chunk);
    });
    req.on('trailers', (t) => {
      trailers = { ...t };
    });
    req.on('end', () => {
      ended = true;
      if (!aborted) handler.onResponseEnd?.(controller, trailers);
    });
    req.on('error', () => {});
    req.on('close', () => {
      if (ended) return;
      if (aborted) {
        // As undici does: an aborted request ends in onResponseError with the abort reason (the owner releases).
        handler.onResponseError?.(controller, reason ?? new Error('aborted'));
        return;
      }
      // Envoy's reset reasons: a RST_STREAM from the peer is a remote reset; a session gone, a connection one.
      const remote = req.rstCode !== undefined && req.rstCode !== http2.constants.NGHTTP2_NO_ERROR;
      const code = remote && !this.session.destroyed ? 'H2_REMOTE_RESET' : 'UND_ERR_SOCKET';
      handler.onResponseError?.(controller, Object.assign(new Error('upstream stream closed'), { code }));
    });
  }

  release(_reusable: boolean): void {
    if (this.released) return;
    this.released = true;
    this.pool.streamDone();
  }
}
