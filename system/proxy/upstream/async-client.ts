// A whole request to a cluster with a buffered answer (Envoy's AsyncClient): used by ext_authz's HTTP service and
// by request mirroring. It goes through the cluster's load balancer, circuit breakers and connection pools, so
// its connections, stats and debug lines are those of the cluster.
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

export interface BufferedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
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
    const c = cluster;
    if (!c.resources.canRequest()) {
      c.stats.upstream_rq_pending_overflow.inc();
      reject(new UpstreamError('overflow', 'max requests'));
      return;
    }
    const host = c.chooseHost();
    if (!host) {
      c.stats.upstream_cx_none_healthy.inc();
      reject(new UpstreamError('no healthy upstream', c.name));
      return;
    }
    const started = performance.now();
    let conn: PoolStream | undefined;
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let counted = false;
    const pool = c.pool(host);
    const settle = (err: UpstreamError | undefined, res?: BufferedResponse, reusable = false) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (counted) {
        c.stats.upstream_rq_active.sub(1);
        c.resources.requests--;
        host.stats.rq_active--;
      }
      if (conn) conn.release(reusable);
      if (err) reject(err);
      else resolve(res!);
    };
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            c.stats.upstream_rq_timeout.inc();
            host.stats.rq_timeout++;
            if (pending && !conn) pool.cancel(pending);
            if (conn) conn.noReuse = true;
            controller?.abort(new Error('timeout'));
            settle(new UpstreamError('timeout', `${timeoutMs}ms`));
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
          const chunks: Buffer[] = [];
          let closeAfter = false;
          ready.dispatch(
            {
              method: req.method as Dispatcher.HttpMethod,
              path: req.path,
              headers: req.headers as Record<string, string | string[]>,
              body: req.body && req.body.length > 0 ? req.body : null,
            },
            {
              onRequestStart: (ctl) => {
                controller = ctl;
              },
              onResponseStart: (_ctl, code, h) => {
                if (code < 200) return;
                status = code;
                headers = h as BufferedResponse['headers'];
                const cn = h.connection;
                if (typeof cn === 'string' && cn.toLowerCase().includes('close')) closeAfter = true;
              },
              onResponseData: (_ctl, chunk) => {
                chunks.push(chunk);
              },
              onResponseEnd: () => {
                c.chargeCode(status);
                c.stats.upstream_rq_completed.inc();
                c.stats.upstream_rq_time.record(performance.now() - started);
                if (status >= 500) host.stats.rq_error++;
                else host.stats.rq_success++;
                settle(undefined, { status, headers, body: Buffer.concat(chunks) }, !closeAfter);
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
  });
}
