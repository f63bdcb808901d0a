// bench:proxy's control-path figures: a 1,000-route RouteConfiguration pushed over ADS to a proxy process → time to
// ACK (with the proxy's own update_duration, and decode + compile alone in this process), and the cost of one route
// lookup against the number of virtual hosts (with a linear scan over the domains for contrast).
import { compileRouteConfiguration } from '../../system/proxy/config/route-table.ts';
import { bootstrapJson, cla, edsCluster, listener } from '../../system/proxy/testing/harness.ts';
import { startTestXdsServer } from '../../system/proxy/testing/xds-server.ts';
import { decode, encode } from '../../system/shared/envoy/protojson.ts';
import { TYPE_URL } from '../../system/shared/envoy/protos.ts';
import { removeTempDir, tempDir } from '../shared/processes.ts';
import { round2 } from '../shared/stats.ts';
import { realisticRoutes } from './route-table.ts';
import { httpGet, startProxyProcess } from './servers.ts';
import type { J } from './settings.ts';

export interface ApplyTime {
  routes: number;
  bytes: number;
  ackMs: number[];
  medianMs: number;
  maxMs: number;
  decodeCompileMs: number;
  updateDurationMs: { p50: number | null; p99: number | null; max: number | null } | undefined;
}

export interface LookupCost {
  vhosts: number;
  nsPerLookup: number;
  linearScanNs: number;
}

/** The route table, renamed for the RDS listener, with a header that makes generation `i` differ from the others. */
const rcFor = (i: number): J => ({
  ...realisticRoutes('app'),
  name: 'listener~8080',
  request_headers_to_add: [{ header: { key: 'x-gen', value: String(i) } }],
});

/** The same work as a proxy's RDS update in this process, without gRPC: decode to canonical JSON and compile. */
function decodeCompileMs(bytes: Uint8Array): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    compileRouteConfiguration(decode('envoy.config.route.v3.RouteConfiguration', bytes), {
      validateClustersDefault: false,
    });
    best = Math.min(best, performance.now() - t);
  }
  return round2(best);
}

export async function applyTime(): Promise<ApplyTime> {
  const xds = await startTestXdsServer();
  const dir = tempDir('gwlab-bench-proxy-');
  try {
    const ads = await startProxyProcess(bootstrapJson({ xdsPort: xds.port }), dir, 'ads');
    const app = { port: 1 };
    xds.setSnapshot('0', {
      clusters: [edsCluster('app'), ...Array.from({ length: 10 }, (_, i) => edsCluster(`svc-${i}`))],
      endpoints: [
        cla('app', [['127.0.0.1', app.port]]),
        ...Array.from({ length: 10 }, (_, i) => cla(`svc-${i}`, [['127.0.0.1', 1]])),
      ],
      listeners: [listener('listener~8080', 0, { rds: 'listener~8080', accessLog: false })],
      routes: [rcFor(0)],
    });
    await xds.waitFor(
      (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'ack' && r.version_info === '0',
      30_000,
    );
    // Push → ACK as the control plane sees it (the resource is encoded before the clock starts), and the proxy's
    // own update_duration (from the response's arrival to its ACK) from its stats.
    const ackMs: number[] = [];
    for (let i = 1; i <= 7; i++) {
      const from = xds.requests.length;
      xds.stage(TYPE_URL.routeConfiguration, String(i), [rcFor(i)]);
      const t = performance.now();
      xds.publish(TYPE_URL.routeConfiguration);
      await xds.waitFor(
        (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'ack' && r.version_info === String(i),
        30_000,
        from,
      );
      ackMs.push(round2(performance.now() - t));
    }
    const stats = JSON.parse(await httpGet(`http://${ads.admin}/stats?format=json&filter=rds\\..*update_duration`));
    const q = stats.stats.find((x: J) => x.histograms)?.histograms;
    const cq = q?.computed_quantiles?.[0]?.values as Array<{ cumulative: number | null }> | undefined;
    const updateDuration = cq ? { p50: cq[2]!.cumulative, p99: cq[6]!.cumulative, max: cq[9]!.cumulative } : undefined;
    const rc = rcFor(99);
    const bytes = encode('envoy.config.route.v3.RouteConfiguration', rc);
    const compileMs = decodeCompileMs(bytes);
    const sorted = [...ackMs].sort((a, b) => a - b);
    const routes = (rc.virtual_hosts as J[]).reduce((n: number, v: J) => n + v.routes.length, 0);
    return {
      routes,
      bytes: bytes.length,
      ackMs,
      medianMs: sorted[Math.floor(sorted.length / 2)]!,
      maxMs: sorted.at(-1)!,
      decodeCompileMs: compileMs,
      updateDurationMs: updateDuration,
    };
  } finally {
    await xds.close();
    removeTempDir(dir);
  }
}

/**
 * ns per route() call (virtual host + the 10th route of it) against the number of virtual hosts, half the hosts
 * matched exactly and half by a `*.suffix` wildcard; next to it a linear scan over the domains (what a naive
 * matcher would cost) for contrast.
 */
export function lookupCost(): LookupCost[] {
  const out: LookupCost[] = [];
  for (const n of [10, 100, 1000, 10000]) {
    const vhosts: J[] = [];
    for (let v = 0; v < n; v++) {
      const routes = Array.from({ length: 10 }, (_, r) => ({ match: { prefix: `/p${r}/` }, route: { cluster: 'c' } }));
      vhosts.push({ name: `v${v}`, domains: [`host-${v}.example.com`, `*.w${v}.example.com`], routes });
    }
    const table = compileRouteConfiguration({ name: 'rc', virtual_hosts: vhosts }, { validateClustersDefault: false });
    const hosts = Array.from({ length: 1024 }, (_, i) =>
      i % 2 ? `host-${(i * 7919) % n}.example.com` : `a.w${(i * 104729) % n}.example.com`,
    );
    const input = { path: '/p9/x', query: '', header: () => undefined };
    let found = 0;
    for (let i = 0; i < 20000; i++) if (table.route(hosts[i & 1023]!, input)) found++;
    const iters = 200_000;
    const t = performance.now();
    for (let i = 0; i < iters; i++) if (table.route(hosts[i & 1023]!, input)) found++;
    const ns = ((performance.now() - t) * 1e6) / iters;
    // Linear scan baseline.
    const scan = (h: string) => {
      for (const v of vhosts)
        for (const d of v.domains as string[]) if (d === h || (d.startsWith('*') && h.endsWith(d.slice(1)))) return v;
      return undefined;
    };
    const scanIters = Math.max(200, Math.floor(2_000_000 / n));
    const t2 = performance.now();
    for (let i = 0; i < scanIters; i++) if (scan(hosts[i & 1023]!)) found++;
    const scanNs = ((performance.now() - t2) * 1e6) / scanIters;
    if (found === 0) throw new Error('lookups found nothing');
    out.push({ vhosts: n, nsPerLookup: Math.round(ns), linearScanNs: Math.round(scanNs) });
  }
  return out;
}
