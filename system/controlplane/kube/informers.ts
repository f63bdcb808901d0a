// Informers (@kubernetes/client-node list+watch), one per watched kind (watched.ts), feeding the pipeline's input
// collections. An informer that stops on an error (the API server restarted, a CRD is missing, RBAC) is restarted
// with backoff, and says why in the log.
import { type KubeConfig, KubernetesObjectApi, makeInformer } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import type { InputCollection } from '../krt/collection.ts';
import type { Metrics } from '../metrics.ts';
import { WATCHED } from './watched.ts';

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
