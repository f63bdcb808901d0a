// What `explain` knows about the cluster: the Gateway API and policy objects, and, for the Gateways that matter to the
// question, their proxy pods, each ready pod's config_dump and the control plane's xDS view. Gathered read-only,
// through the Kubernetes API and the two admin servers by port-forward — the same sources a user has. The analysis
// (analyze.ts) is a pure function of this, so it is unit-tested without a cluster.
import type { V1Pod } from '@kubernetes/client-node';
import { watchedKind } from '../../../system/controlplane/kube/watched.ts';
import { CONTROL_PLANE, type ConfigDump, configDump } from '../../toolkit/admin.ts';
import { eventsFor, type PodSummary, summarizePod } from '../../toolkit/describe.ts';
import type { KObj, Kube } from '../../toolkit/kube.ts';
import { GW_API, listProxyPods, mapLimit, VENDOR_API, withControlPlaneAdmin, withProxyAdmin } from '../proxies.ts';

export interface GatewayKey {
  namespace: string;
  name: string;
  /** Explaining one listener of it (`gateway/<name>/<listener>`). */
  listener?: string;
}

export interface ProxyPodView {
  pod: string;
  ready: boolean;
  summary: PodSummary;
  /** The pod's config_dump?include_eds, when it could be read (ready pods only). */
  dump?: ConfigDump;
  dumpError?: string;
  /** The pod's /clusters text (hosts' health flags), when it could be read. */
  clusters?: string;
}

/** Per-type xDS state of one connected proxy, as /snapshots/xds shows it. */
export interface XdsTypeState {
  status?: string;
  version_sent?: string;
  version_acked?: string;
  last_nack?: { version: string; detail: string; at?: string };
}

export interface GatewayProxies {
  gateway: GatewayKey;
  pods: ProxyPodView[];
  /** node id → type → state, from the control plane's /snapshots/xds entry of this Gateway's role. */
  xds?: Record<string, Record<string, XdsTypeState>>;
}

export interface World {
  gatewayClasses: KObj[];
  gateways: KObj[];
  routes: KObj[];
  /** GRPCRoutes (none on a cluster without the CRD). */
  grpcRoutes?: KObj[];
  /** TCPRoutes, UDPRoutes and TLSRoutes (none on a cluster without their CRDs). */
  l4Routes?: KObj[];
  policies: KObj[];
  /** ListenerPolicies (none on a cluster without the CRD). */
  listenerPolicies?: KObj[];
  extensions: KObj[];
  /** BackendConfigPolicies (none on a cluster without the CRD). */
  backendConfigPolicies?: KObj[];
  grants: KObj[];
  /** Services that objects under explanation refer to (ext-auth backends), by `ns/name`; absent = not found. */
  services: Record<string, KObj | null>;
  /** Proxies of the Gateways that matter to the question, by `ns/name`. */
  proxies: Record<string, GatewayProxies>;
  /** Why the control plane's /snapshots/xds could not be read, if it could not. */
  xdsError?: string;
  /** The control plane's validation mode (GWVENDOR_XDS_VALIDATION on its Deployment); strict when unknown. */
  validation?: 'strict' | 'off';
}

export const roleOf = (g: GatewayKey) => `gwvendor-kube-gateway-api~${g.namespace}~${g.name}`;
export const keyOf = (o: { metadata?: { namespace?: string; name?: string } }) =>
  `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

async function listOrEmpty(kube: Kube, apiVersion: string, kind: string): Promise<KObj[]> {
  try {
    return await kube.list(apiVersion, kind);
  } catch (err) {
    // A cluster without the vendor CRDs (or Gateway API v1.6.1's TCPRoute, UDPRoute) simply has no such objects:
    // a 404, or client-node's discovery not listing the kind. Anything else is a real failure.
    if ((err as { code?: number }).code === 404) return [];
    if (/Unrecognized API version and kind/.test((err as Error)?.message ?? '')) return [];
    throw err;
  }
}

/** The control plane's validation mode: it decides whether an invalid policy's settings are applied. */
async function validationMode(kube: Kube): Promise<'strict' | 'off'> {
  const d = await kube
    .get('apps/v1', 'Deployment', CONTROL_PLANE.deployment, CONTROL_PLANE.namespace)
    .catch(() => undefined);
  const env = (d?.spec?.template?.spec?.containers?.[0]?.env ?? []).find(
    (e: { name: string }) => e.name === 'GWVENDOR_XDS_VALIDATION',
  );
  return env?.value === 'off' ? 'off' : 'strict';
}

/** Every object explain reasons about (all namespaces: policies and grants cross namespaces). */
export async function gatherObjects(kube: Kube): Promise<Omit<World, 'services' | 'proxies' | 'xdsError'>> {
  const [
    gatewayClasses,
    gateways,
    routes,
    grpcRoutes,
    tcp,
    udp,
    tlsr,
    policies,
    extensions,
    grants,
    validation,
    listenerPolicies,
    backendConfigPolicies,
  ] = await Promise.all([
    listOrEmpty(kube, GW_API, 'GatewayClass'),
    listOrEmpty(kube, GW_API, 'Gateway'),
    listOrEmpty(kube, GW_API, 'HTTPRoute'),
    listOrEmpty(kube, GW_API, 'GRPCRoute'),
    listOrEmpty(kube, GW_API, 'TCPRoute'),
    listOrEmpty(kube, GW_API, 'UDPRoute'),
    listOrEmpty(kube, GW_API, 'TLSRoute'),
    listOrEmpty(kube, VENDOR_API, 'TrafficPolicy'),
    listOrEmpty(kube, VENDOR_API, 'GatewayExtension'),
    listOrEmpty(kube, watchedKind('ReferenceGrant')!.apiVersion, 'ReferenceGrant'),
    validationMode(kube),
    listOrEmpty(kube, VENDOR_API, 'ListenerPolicy'),
    listOrEmpty(kube, VENDOR_API, 'BackendConfigPolicy'),
  ]);
  const l4Routes = [...tcp, ...udp, ...tlsr];
  return {
    gatewayClasses,
    gateways,
    routes,
    grpcRoutes,
    l4Routes,
    policies,
    listenerPolicies,
    extensions,
    backendConfigPolicies,
    grants,
    validation,
  };
}

/** Reads the proxies of `gateways`: pods (with events for those not running), config_dumps, and the xDS view. */
export async function gatherProxies(
  kube: Kube,
  gateways: GatewayKey[],
): Promise<{ proxies: Record<string, GatewayProxies>; xdsError?: string }> {
  const proxies: Record<string, GatewayProxies> = {};
  if (!gateways.length) return { proxies };
  const namespaces = [...new Set(gateways.map((g) => g.namespace))];
  const wanted = new Set(gateways.map((g) => `${g.namespace}/${g.name}`));
  const pods = (await listProxyPods(kube, namespaces)).filter((p) =>
    wanted.has(`${p.gateway.namespace}/${p.gateway.name}`),
  );
  for (const g of gateways) proxies[`${g.namespace}/${g.name}`] = { gateway: g, pods: [] };

  let xdsError: string | undefined;
  const [views, xdsData] = await Promise.all([
    mapLimit(pods, 4, async (p): Promise<[string, ProxyPodView]> => {
      const events = p.ready
        ? []
        : await eventsFor(kube, {
            kind: 'Pod',
            name: p.pod,
            namespace: p.gateway.namespace,
            uid: p.object.metadata?.uid,
          });
      const view: ProxyPodView = { pod: p.pod, ready: p.ready, summary: summarizePod(p.object as V1Pod, events) };
      if (p.ready) {
        try {
          // One port-forward for both: the configuration and the hosts' health flags.
          const got = await withProxyAdmin(kube, p, async (a) => ({
            dump: await configDump(a, { includeEds: true }),
            clusters: await a.get('/clusters').then(
              (r) => r.text,
              () => undefined,
            ),
          }));
          view.dump = got.dump;
          if (got.clusters !== undefined) view.clusters = got.clusters;
        } catch (err) {
          view.dumpError = (err as Error).message;
        }
      }
      return [`${p.gateway.namespace}/${p.gateway.name}`, view];
    }),
    withControlPlaneAdmin(kube, (a) => a.json<{ data: Record<string, any> }>('/snapshots/xds')).catch((err: Error) => {
      xdsError = err.message;
      return undefined;
    }),
  ]);
  for (const [k, v] of views) proxies[k].pods.push(v);
  for (const g of gateways) {
    const entry = xdsData?.data?.[roleOf(g)];
    if (!entry?.proxies) continue;
    const byNode: Record<string, Record<string, XdsTypeState>> = {};
    for (const [node, st] of Object.entries<any>(entry.proxies)) byNode[node] = st.types ?? {};
    proxies[`${g.namespace}/${g.name}`].xds = byNode;
  }
  return { proxies, xdsError };
}

/** Reads the named Services (`ns/name`); a missing one maps to null. */
export async function gatherServices(kube: Kube, keys: string[]): Promise<Record<string, KObj | null>> {
  const out: Record<string, KObj | null> = {};
  await mapLimit([...new Set(keys)], 8, async (k) => {
    const [ns, name] = k.split('/');
    out[k] = (await kube.get('v1', 'Service', name, ns)) ?? null;
  });
  return out;
}
