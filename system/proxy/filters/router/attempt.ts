// One try of a routed request (Envoy's UpstreamRequest): a stream from the host's connection pool, then the request
// dispatched on the connection it got (undici's dispatch handler), its response headers and body handed to the
// router's call as they arrive (with back-pressure from the downstream), and the reset reasons Envoy reports.
import type { Dispatcher } from 'undici';
import type { Logger } from '../../log.ts';
import { type HeaderMap, headerLines } from '../../stream-info.ts';
import type { Cluster } from '../../upstream/cluster.ts';
import type { Host } from '../../upstream/host.ts';
import type { PendingStream, PoolStream, UpstreamPool } from '../../upstream/pool.ts';
import type { FilterStream } from '../filter-api.ts';

/** What a try reports to (upstream-call.ts's UpstreamCall). */
export interface AttemptOwner {
  readonly stream: FilterStream;
  readonly upstreamCluster: Cluster;
  /** The `router` logger. */
  readonly log: Logger;
  /** The upstream request of a try. */
  requestFor(): Dispatcher.DispatchOptions;
  /** Response headers arrived; false when the response is discarded (a retry). */
  onResponseHeaders(attempt: Attempt, status: number, headers: HeaderMap, endStream: boolean): boolean;
  /** The response ended; its trailers (HTTP/2, or HTTP/1.1 chunked) go downstream. */
  onResponseComplete(attempt: Attempt, status: number, trailers: HeaderMap | undefined): void;
  /** The upstream stream was reset (connection closed, protocol error). */
  onReset(attempt: Attempt, reason: string): void;
}

/** One try: a pool stream, then an undici dispatch on the connection it got. */
export class Attempt implements Dispatcher.DispatchHandler {
  private readonly call: AttemptOwner;
  readonly host: Host;
  /** The pool the try asked for a connection (a removed host's pool is closed, not replaced). */
  pool: UpstreamPool | undefined;
  pending: PendingStream | undefined;
  private conn: PoolStream | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private abandoned = false;
  private status = 0;
  private forwarding = false;
  private closeAfter = false;
  private counted = false;
  startedAt = performance.now();

  constructor(call: AttemptOwner, host: Host) {
    this.call = call;
    this.host = host;
  }

  onPoolReady(conn: PoolStream): void {
    const s = this.call.stream;
    const c = this.call.upstreamCluster;
    if (this.abandoned || s.done) {
      conn.release(true);
      return;
    }
    this.conn = conn;
    this.counted = true;
    c.stats.upstream_rq_total.inc();
    c.stats.upstream_rq_active.add(1);
    c.resources.requests++;
    this.host.stats.rq_total++;
    this.host.stats.rq_active++;
    const log = this.call.log;
    if (log.on('debug')) log.debug('pool ready', s.tags);
    conn.dispatch(this.call.requestFor(), this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abandoned) controller.abort(new Error('abandoned'));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx informational responses are not forwarded
    this.status = statusCode;
    const s = this.call.stream;
    const conn = headers.connection;
    if (typeof conn === 'string' && conn.toLowerCase().includes('close')) this.closeAfter = true;
    const log = this.call.log;
    if (log.on('debug')) {
      log.debug(`upstream headers complete: end_stream=false\n${headerLines(statusCode, headers)}`, s.tags);
    }
    if (this.abandoned) return;
    // An HTTP/2 upstream's HEADERS with END_STREAM (gRPC's trailers-only responses): http2-client.ts says so.
    const endStream = (controller as { endStream?: boolean }).endStream === true;
    this.forwarding = this.call.onResponseHeaders(this, statusCode, headers, endStream);
    if (!this.forwarding && !this.abandoned) {
      // Discarded for a retry: reset the upstream stream as Envoy does.
      this.abandon();
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.forwarding || this.abandoned) return;
    const s = this.call.stream;
    if (!s.write(chunk)) {
      controller.pause();
      s.whenDrained(() => controller.resume());
    }
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers?: HeaderMap): void {
    this.done(!this.closeAfter);
    if (this.forwarding && !this.abandoned) {
      const t = trailers && Object.keys(trailers).length > 0 ? trailers : undefined;
      this.call.onResponseComplete(this, this.status, t);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.done(false);
    if (this.abandoned) return;
    this.call.onReset(this, describeReset(err));
  }

  /** Stops this try (timeout, retry, downstream gone): cancels a pending pool stream or aborts the request. */
  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    if (this.pending && !this.conn) this.pool?.cancel(this.pending);
    if (this.conn) {
      this.conn.noReuse = true;
      if (this.controller && !this.controller.aborted) this.controller.abort(new Error('upstream request abandoned'));
    }
  }

  private done(reusable: boolean): void {
    const c = this.call.upstreamCluster;
    if (this.counted) {
      this.counted = false;
      c.stats.upstream_rq_active.sub(1);
      c.resources.requests--;
      this.host.stats.rq_active--;
    }
    const conn = this.conn;
    if (conn) {
      this.conn = undefined;
      conn.release(reusable && !this.abandoned);
    }
  }
}

function describeReset(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection termination';
    case 'H2_REMOTE_RESET':
      return 'remote reset';
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_STATUS':
    case 'UND_ERR_INFO':
      return 'protocol error';
    default:
      return 'connection termination';
  }
}
