// connection-stats.ts, the one accounting of an upstream connection (Envoy's cluster upstream_cx_* and host cx_*
// stats) and the cluster's connect timeout, which the HTTP/1.1 pool, the HTTP/2 client, tcp_proxy and the router's
// upgrades share: what opening and closing count, and a connection left connecting past connect_timeout destroyed
// with CONNECT_TIMEOUT and counted in upstream_cx_connect_timeout (a connect that came in time: the cleared timer
// counts nothing).
import { describe, expect, it } from 'vitest';
import { StatsStore } from '../stats.ts';
import { makeClusterStats } from './cluster-stats.ts';
import {
  armConnectTimeout,
  CONNECT_TIMEOUT,
  countConnectionClosed,
  countConnectionOpened,
} from './connection-stats.ts';
import { Host } from './host.ts';

const host = () =>
  new Host({
    address: '127.0.0.1',
    port: 8080,
    hostname: '',
    health: 'HEALTHY',
    weight: 1,
    priority: 0,
    locality: undefined,
    metadata: undefined,
  });

describe('an upstream connection in the stats', () => {
  it('opened: cx_total, the codec total, cx_active, the host; closed: cx_destroy, cx_length_ms, cx_active back', () => {
    const stats = makeClusterStats(new StatsStore(), 'c');
    const h = host();
    countConnectionOpened(stats, h, 'http2');
    countConnectionOpened(stats, h);
    expect(stats.upstream_cx_total.value).toBe(2);
    expect(stats.upstream_cx_http2_total.value).toBe(1);
    expect(stats.upstream_cx_http1_total.value).toBe(0);
    expect(stats.upstream_cx_active.value).toBe(2);
    expect(h.stats).toMatchObject({ cx_total: 2, cx_active: 2 });
    countConnectionClosed(stats, h, performance.now());
    expect(stats.upstream_cx_destroy.value).toBe(1);
    expect(stats.upstream_cx_active.value).toBe(1);
    expect(stats.upstream_cx_length_ms.count).toBe(1);
    expect(h.stats).toMatchObject({ cx_total: 2, cx_active: 1 });
  });

  it('the connect timeout destroys the connection with CONNECT_TIMEOUT and counts it; cleared in time, nothing', async () => {
    const stats = makeClusterStats(new StatsStore(), 'c');
    const notes: string[] = [];
    const destroyed = new Promise<Error | undefined>((resolve) => {
      armConnectTimeout(stats, 5, { destroy: resolve }, () => notes.push('timeout'));
    });
    const error = (await destroyed) as NodeJS.ErrnoException;
    expect(error.code).toBe(CONNECT_TIMEOUT);
    expect(notes).toEqual(['timeout']);
    expect(stats.upstream_cx_connect_timeout.value).toBe(1);

    let cut = false;
    clearTimeout(armConnectTimeout(stats, 5, { destroy: () => (cut = true) }));
    await new Promise((r) => setTimeout(r, 20));
    expect(cut).toBe(false);
    expect(stats.upstream_cx_connect_timeout.value).toBe(1);
  });
});
