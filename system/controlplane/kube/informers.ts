// Informers (@kubernetes/client-node list+watch) feeding the pipeline's input collections. An informer that stops on
// an error (the API server restarted, a CRD is missing, RBAC) is restarted with backoff, and says why in the log.
import { type KubeConfig, KubernetesObjectApi, makeInformer } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import type { InputCollection } from '../krt/collection.ts';
import type { Metrics } from '../metrics.ts';

export interface WatchedResource {
  /** For logs and metrics, e.g. `httproutes.gateway.networking.k8s.io`. */
  resource: string;
  apiVersion: string;
  kind: string;
  /** The list/watch path, e.g. `/apis/gateway.networking.k8s.io/v1/httproutes`. */
  path: string;
  labelSelector?: string;
}

/** Everything the control plane reads (the install manifest's ClusterRole grants exactly these). */
export const WATCHED: WatchedResource[] = [
  {
    resource: 'gatewayclasses.gateway.networking.k8s.io',
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    path: '/apis/gateway.networking.k8s.io/v1/gatewayclasses',
  },
  {
    resource: 'gateways.gateway.networking.k8s.io',
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    path: '/apis/gateway.networking.k8s.io/v1/gateways',
  },
  {
    resource: 'httproutes.gateway.networking.k8s.io',
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    path: '/apis/gateway.networking.k8s.io/v1/httproutes',
  },
  {
    resource: 'referencegrants.gateway.networking.k8s.io',
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    path: '/apis/gateway.networking.k8s.io/v1beta1/referencegrants',
  },
  {
    resource: 'gatewayparameters.gateway.gwvendor.dev',
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'GatewayParameters',
    path: '/apis/gateway.gwvendor.dev/v1alpha1/gatewayparameters',
  },
  {
    resource: 'trafficpolicies.gateway.gwvendor.dev',
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'TrafficPolicy',
    path: '/apis/gateway.gwvendor.dev/v1alpha1/trafficpolicies',
  },
  {
    resource: 'gatewayextensions.gateway.gwvendor.dev',
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'GatewayExtension',
    path: '/apis/gateway.gwvendor.dev/v1alpha1/gatewayextensions',
  },
  { resource: 'namespaces', apiVersion: 'v1', kind: 'Namespace', path: '/api/v1/namespaces' },
  { resource: 'services', apiVersion: 'v1', kind: 'Service', path: '/api/v1/services' },
  {
    resource: 'endpointslices.discovery.k8s.io',
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    path: '/apis/discovery.k8s.io/v1/endpointslices',
  },
  // Only the proxies' Deployments (for the Gateways' Programmed condition and the deployer).
  {
    resource: 'deployments.apps',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    path: '/apis/apps/v1/deployments',
    labelSelector: 'gateway.networking.k8s.io/gateway-name',
  },
];

export interface InformerSet {
  /** Resolves when every informer has listed once. */
  synced: Promise<void>;
  isSynced(): boolean;
  stop(): Promise<void>;
}

function explain(err: unknown): string {
  const e = err as { statusCode?: number; code?: number | string; body?: unknown; message?: string };
  const status = e?.statusCode ?? (typeof e?.code === 'number' ? e.code : undefined);
  if (status === 404) return 'not found (are the CRDs installed? kubectl apply -f system/manifests/crds/)';
  if (status === 403) return 'forbidden (check the ClusterRole gwvendor)';
  return e?.message ?? String(err);
}

export function startInformers(
  kc: KubeConfig,
  inputFor: (kind: string) => InputCollection<any> | undefined,
  log: Logger,
  metrics?: Metrics,
): InformerSet {
  const objApi = KubernetesObjectApi.makeApiClient(kc);
  let stopped = false;
  const synced = new Set<string>();
  let resolveSynced!: () => void;
  const syncedPromise = new Promise<void>((r) => {
    resolveSynced = r;
  });
  const informers: { stop(): Promise<void> }[] = [];

  for (const w of WATCHED) {
    const input = inputFor(w.kind);
    if (!input) throw new Error(`no input collection for ${w.kind}`);
    let listed = false;
    const onListed = () => {
      if (stopped || synced.has(w.resource)) return;
      synced.add(w.resource);
      input.markSynced();
      log.info('synced', { resource: w.resource, items: input.size() });
      if (synced.size === WATCHED.length) resolveSynced();
    };
    const listFn = async () => {
      const list = await objApi.list(
        w.apiVersion,
        w.kind,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        w.labelSelector,
      );
      listed = true;
      log.debug('listed', {
        resource: w.resource,
        items: list.items.length,
        resourceVersion: list.metadata?.resourceVersion,
      });
      // The informer adds the listed items right after this resolves (before it opens the watch): synced then.
      setImmediate(onListed);
      return list as any;
    };
    const inf = makeInformer<any>(kc, w.path, listFn, w.labelSelector);
    inf.on('add', (o) => input.upsert(o));
    inf.on('update', (o) => input.upsert(o));
    inf.on('delete', (o) =>
      input.delete(o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name),
    );
    let backoff = 500;
    let failures = 0;
    const start = async (): Promise<void> => {
      if (stopped) return;
      await inf.start();
    };
    inf.on('error', (err) => {
      if (stopped) return;
      failures++;
      metrics?.informerRestarts.inc({ resource: w.resource });
      const level = failures > 3 ? 'warn' : 'info';
      log[level]('informer stopped; restarting', { resource: w.resource, reason: explain(err), retryInMs: backoff });
      const delay = backoff;
      backoff = Math.min(backoff * 2, 30_000);
      setTimeout(() => {
        start()
          .then(() => {
            if (listed) backoff = 500;
          })
          .catch((e) => log.warn('informer restart failed', { resource: w.resource, reason: explain(e) }));
      }, delay).unref();
    });
    informers.push(inf);
    start().catch((e) => log.warn('informer start failed', { resource: w.resource, reason: explain(e) }));
  }
  return {
    synced: syncedPromise,
    isSynced: () => synced.size === WATCHED.length,
    async stop() {
      stopped = true;
      await Promise.all(informers.map((i) => i.stop().catch(() => {})));
    },
  };
}
