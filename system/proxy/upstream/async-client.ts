// A request to a cluster from inside the proxy (Envoy's Http::AsyncClient): openStream() streams a request body and
// hands the answer over as it comes (the gRPC client's streams, upstream/grpc-client.ts: ext_authz, ratelimit and
// ext_proc on an HTTP/2 cluster), sendBuffered() sends a whole request and buffers the answer (ext_authz's HTTP service,
// request mirroring). Both go through the cluster's load balancer, circuit breakers and connection pools, so their
// connections, stats and debug lines are those of the cluster.
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Tags } from '../log.ts';
import type { HeaderMap } from '../stream-info.ts';
import type { Cluster } from './cluster.ts';
import type { PoolStream } from './pool.ts';

export interface BufferedRequest {
  method: string;
  path: string;
  headers: HeaderMap;
  body?: Buffer | undefined;
}

/** A request whose body may be a stream (written while the answer arrives). */
export interface StreamRequest {
  method: string;
  path: string;
  headers: HeaderMap;
  body?: Buffer | Readable | undefined;
}

/** What the caller of openStream hears: the response headers, each body chunk, then the end (with trailers) or a failure. */
export interface StreamCallbacks {
  onHeaders?(status: number, headers: BufferedResponse['headers'], endStream: boolean): void;
  onData?(chunk: Buffer): void;
  onEnd(status: number, headers: BufferedResponse['headers'], trailers: BufferedResponse['headers']): void;
  onError(err: UpstreamError): void;
}

export interface BufferedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** HTTP/2 trailers (gRPC's grpc-status); {} when none. */
  trailers: Record<string, string | string[] | undefined>;
}

export class UpstreamError extends Error {
  readonly reason: 'no healthy upstream' | 'overflow' | 'connection failure' | 'timeout' | 'reset';
  constructor(reason: UpstreamError['reason'], detail: string) {
    super(`${reason}: ${detail}`);
    this.reason = reason;
  }
}

export function sendBuffered(
  cluster: Cluster,
  req: BufferedRequest,
  timeoutMs: number,
  tags: Tags,
): Promise<BufferedResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    openStream(cluster, req, timeoutMs, tags, {
      onData: (chunk) => chunks.push(chunk),
      onEnd: (status, headers, trailers) => resolve({ status, headers, body: Buffer.concat(chunks), trailers }),
      onError: reject,
    });
  });
}

/**
 * Opens one request on the cluster (a host from its load balancer, a stream from that host's pool) and reports
 * the answer to `cb`; `timeoutMs` (0: none) bounds the whole exchange. Returns a function that cancels it.
 */
export function openStream(
  cluster: Cluster,
  req: StreamRequest,
  timeoutMs: number,
  tags: Tags,
  cb: StreamCallbacks,
): (why: string) => void {
  const c = cluster;
  if (!c.resources.canRequest()) {
    c.stats.upstream_rq_pending_overflow.inc();
    queueMicrotask(() => cb.onError(new UpstreamError('overflow', 'max requests')));
    return () => {};
  }
  const host = c.chooseHost();
  if (!host) {
    c.stats.upstream_cx_none_healthy.inc();
    queueMicrotask(() => cb.onError(new UpstreamError('no healthy upstream', c.name)));
    return () => {};
  }
  const started = performance.now();
  let conn: PoolStream | undefined;
  let controller: Dispatcher.DispatchController | undefined;
  let settled = false;
  let counted = false;
  const pool = c.pool(host);
  const settle = (err: UpstreamError | undefined, done?: () => void, reusable = false) => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    if (counted) {
      c.stats.upstream_rq_active.sub(1);
      c.resources.requests--;
      host.stats.rq_active--;
    }
    if (conn) conn.release(reusable);
    if (err) cb.onError(err);
    else done?.();
  };
  const cancel = (why: UpstreamError) => {
    if (settled) return;
    if (pending && !conn) pool.cancel(pending);
    if (conn) conn.noReuse = true;
    controller?.abort(new Error(why.reason));
    settle(why);
  };
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          c.stats.upstream_rq_timeout.inc();
          host.stats.rq_timeout++;
          cancel(new UpstreamError('timeout', `${timeoutMs}ms`));
        }, timeoutMs)
      : undefined;
  const pending = pool.newStream(
    {
      onFailure: (reason, detail) =>
        settle(new UpstreamError(reason === 'overflow' ? 'overflow' : 'connection failure', detail)),
      onReady: (ready) => {
        if (settled) {
          ready.release(true);
          return;
        }
        conn = ready;
        counted = true;
        c.stats.upstream_rq_total.inc();
        c.stats.upstream_rq_active.add(1);
        c.resources.requests++;
        host.stats.rq_total++;
        host.stats.rq_active++;
        let status = 0;
        let headers: BufferedResponse['headers'] = {};
        let closeAfter = false;
        const body = req.body;
        ready.dispatch(
          {
            method: req.method as Dispatcher.HttpMethod,
            path: req.path,
            headers: req.headers as Record<string, string | string[]>,
            body: Buffer.isBuffer(body) ? (body.length > 0 ? body : null) : (body ?? null),
          },
          {
            onRequestStart: (ctl) => {
              controller = ctl;
            },
            onResponseStart: (ctl, code, h) => {
              if (code < 200) return;
              status = code;
              headers = h as BufferedResponse['headers'];
              const cn = h.connection;
              if (typeof cn === 'string' && cn.toLowerCase().includes('close')) closeAfter = true;
              cb.onHeaders?.(code, headers, (ctl as { endStream?: boolean }).endStream === true);
            },
            onResponseData: (_ctl, chunk) => {
              if (!settled) cb.onData?.(chunk);
            },
            onResponseEnd: (_ctl, trailers) => {
              c.chargeCode(status);
              c.stats.upstream_rq_completed.inc();
              c.stats.upstream_rq_time.record(performance.now() - started);
              if (status >= 500) host.stats.rq_error++;
              else host.stats.rq_success++;
              const t = (trailers ?? {}) as BufferedResponse['headers'];
              settle(undefined, () => cb.onEnd(status, headers, t), !closeAfter);
            },
            onResponseError: (_ctl, err) => {
              c.stats.upstream_rq_rx_reset.inc();
              host.stats.rq_error++;
              settle(new UpstreamError('reset', err.message));
            },
          },
        );
      },
    },
    tags,
  );
  return (why) => cancel(new UpstreamError('reset', why));
}
