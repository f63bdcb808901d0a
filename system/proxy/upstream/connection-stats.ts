// What every connection the proxy opens to an upstream host counts, and the cluster's connect timeout on it, written
// once for the HTTP/1.1 pool (pool.ts), the HTTP/2 client (http2-client.ts), tcp_proxy (network/tcp-proxy.ts) and the
// router's upgrade connections (filters/router/upgrade.ts). As Envoy's ClusterInfo traffic stats and host stats:
// opened, upstream_cx_total (with the codec's upstream_cx_http1_total / upstream_cx_http2_total), upstream_cx_active
// and the host's cx_total/cx_active; closed, upstream_cx_destroy and upstream_cx_length_ms; a connect that outlasts
// the cluster's connect_timeout, upstream_cx_connect_timeout and the connection destroyed with CONNECT_TIMEOUT, which
// the caller's error handler tells from other failures ("connection timeout" vs "delayed connect error").
import type { ClusterStats } from './cluster-stats.ts';
import type { Host } from './host.ts';

/** The code of the error a connection is destroyed with when the cluster's connect timeout fires. */
export const CONNECT_TIMEOUT = 'ETIMEDOUT_CONNECT';

/** Counts a connection opened to `host` (a codec's own total when it speaks HTTP/1.1 or HTTP/2). */
export function countConnectionOpened(stats: ClusterStats, host: Host, codec?: 'http1' | 'http2'): void {
  stats.upstream_cx_total.inc();
  if (codec === 'http1') stats.upstream_cx_http1_total.inc();
  if (codec === 'http2') stats.upstream_cx_http2_total.inc();
  stats.upstream_cx_active.add(1);
  host.stats.cx_total++;
  host.stats.cx_active++;
}

/** Counts a connection to `host` closed, `openedAt` (performance.now()) being when it was opened. */
export function countConnectionClosed(stats: ClusterStats, host: Host, openedAt: number): void {
  stats.upstream_cx_active.sub(1);
  stats.upstream_cx_destroy.inc();
  stats.upstream_cx_length_ms.record(performance.now() - openedAt);
  host.stats.cx_active--;
}

/**
 * Arms the cluster's connect timeout on a connection being made (a socket, or a request whose socket it is): when it
 * fires first, upstream_cx_connect_timeout counts, `onTimeout` runs and the connection is destroyed with an error of
 * code CONNECT_TIMEOUT. Clear the returned timer once connected; it does not keep the process alive by itself.
 */
export function armConnectTimeout(
  stats: ClusterStats,
  connectTimeoutMs: number,
  connection: { destroy(error?: Error): unknown },
  onTimeout?: () => void,
): NodeJS.Timeout {
  const timer = setTimeout(() => {
    onTimeout?.();
    stats.upstream_cx_connect_timeout.inc();
    connection.destroy(Object.assign(new Error('connect timeout'), { code: CONNECT_TIMEOUT }));
  }, connectTimeoutMs);
  timer.unref();
  return timer;
}
