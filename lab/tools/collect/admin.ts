// What the admin servers say, fetched through port-forwards that are always closed: the control plane's snapshots and
// metrics (controlplane/), and each proxy pod's config_dump with endpoints, stats and certificates — plus listeners, clusters and
// server_info when extended (proxies/<namespace>/<pod>/). A proxy pod that is not Ready cannot be forwarded to: its
// collector is skipped and says why.
import type { V1Pod } from '@kubernetes/client-node';
import type { AdminSession } from '../../toolkit/admin.ts';
import { notReadyReasons, summarizePod } from '../../toolkit/describe.ts';
import { listProxyPods, mapLimit, type ProxyPod, withControlPlaneAdmin, withProxyAdmin } from '../proxies.ts';
import type { Output } from './output.ts';
import type { Collector, Outcome } from './types.ts';

export interface AdminFetch {
  path: string;
  file: string;
}

export const CONTROL_PLANE_FETCHES: AdminFetch[] = [
  { path: '/snapshots/krt?pretty', file: 'snapshots_krt.json' },
  { path: '/snapshots/xds?pretty', file: 'snapshots_xds.json' },
  { path: '/metrics', file: 'metrics.txt' },
];

export const PROXY_FETCHES: AdminFetch[] = [
  { path: '/config_dump?include_eds', file: 'config_dump.json' },
  { path: '/stats/prometheus', file: 'stats_prometheus.txt' },
  // The certificates each TLS filter chain serves (Envoy's /certs: subjects, SANs, serials, days until expiration;
  // never a private key), for HTTPS listeners' SNI and certificate bugs (issue 12 item 6).
  { path: '/certs', file: 'certs.json' },
];

export const PROXY_EXTENDED_FETCHES: AdminFetch[] = [
  { path: '/listeners?format=json', file: 'listeners.json' },
  { path: '/clusters', file: 'clusters.txt' },
  { path: '/server_info', file: 'server_info.json' },
];

/** Each fetch written under `dir` whatever its status (an error page is evidence too); a non-200 is an error. */
async function fetchAll(admin: AdminSession, fetches: AdminFetch[], dir: string, out: Output): Promise<Outcome> {
  const errors: string[] = [];
  await mapLimit(fetches, 3, async (f) => {
    try {
      const r = await admin.get(f.path);
      await out.write(`${dir}/${f.file}`, r.text);
      if (r.status !== 200) errors.push(`GET ${f.path} answered ${r.status}: ${r.text.slice(0, 200)}`);
    } catch (err) {
      errors.push((err as Error).message);
    }
  });
  return { errors, notes: [`from pod ${admin.pod}`] };
}

export const controlPlaneCollector: Collector = {
  name: 'controlplane',
  what: 'the control plane admin (9095): /snapshots/krt, /snapshots/xds, /metrics',
  run: ({ kube }, out) =>
    withControlPlaneAdmin(kube, (admin) => fetchAll(admin, CONTROL_PLANE_FETCHES, 'controlplane', out)),
};

export function proxyCollector(p: ProxyPod): Collector {
  const id = `${p.gateway.namespace}/${p.pod}`;
  return {
    name: `proxy ${id}`,
    what: `the proxy admin (19000) of Gateway ${p.gateway.namespace}/${p.gateway.name}: config_dump?include_eds, stats/prometheus, certs (extended: listeners, clusters, server_info)`,
    async run({ kube, options }, out) {
      if (!p.ready) {
        const why = notReadyReasons(summarizePod(p.object as V1Pod));
        return { skipped: `pod is not Ready, so it cannot be port-forwarded: ${why.join('; ') || 'not Ready'}` };
      }
      const fetches = options.extended ? [...PROXY_FETCHES, ...PROXY_EXTENDED_FETCHES] : PROXY_FETCHES;
      return withProxyAdmin(kube, p, (admin) => fetchAll(admin, fetches, `proxies/${id}`, out));
    },
  };
}

/**
 * One collector per proxy pod of the collected namespaces. A failed listing, or no proxy at all, is one `proxies`
 * entry saying so, so the index always accounts for the proxies.
 */
export async function proxyCollectors(
  kube: Parameters<typeof listProxyPods>[0],
  namespaces?: string[],
): Promise<Collector[]> {
  const what = 'the proxy pods (label gateway.networking.k8s.io/gateway-name) of the collected namespaces';
  let pods: ProxyPod[];
  try {
    pods = await listProxyPods(kube, namespaces);
  } catch (err) {
    return [
      {
        name: 'proxies',
        what,
        run: () => Promise.reject(err),
      },
    ];
  }
  if (!pods.length) {
    const where = namespaces ? `namespaces ${namespaces.join(', ')}` : 'any namespace';
    return [{ name: 'proxies', what, run: async () => ({ skipped: `no proxy pods in ${where}` }) }];
  }
  return pods.map(proxyCollector);
}
