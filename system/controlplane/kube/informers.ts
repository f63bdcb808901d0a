// Informers, one per watched kind (watched.ts), feeding the pipeline's input collections: the project's list-watch
// loop (system/shared/kube/list-watch.ts) over @kubernetes/client-node (the list through KubernetesObjectApi, the
// watch through its Watch), as the control plane keeps client-node for its API access. A list or watch that fails
// (the API server restarted, a CRD is missing, RBAC) is retried with backoff (500 ms doubling to 30 s, from 500 ms
// again once a list or watch went well; client-go's reflector backs off 800 ms to 30 s), counted in
// informer_restarts_total, and the log says why.
import { type KubeConfig, KubernetesObjectApi, Watch } from '@kubernetes/client-node';
import {
  httpStatusOf,
  ListWatch,
  type ListWatchSource,
  namespacedName,
  type WatchEventLine,
} from '../../shared/kube/list-watch.ts';
import type { Logger } from '../../shared/log.ts';
import type { InputCollection } from '../krt/collection.ts';
import type { Metrics } from '../metrics.ts';
import { WATCHED, type WatchedKind } from './watched.ts';

export interface InformerSet {
  /** Resolves when every informer has listed once. */
  synced: Promise<void>;
  isSynced(): boolean;
  stop(): Promise<void>;
}

/**
 * The API server does not serve the kind: a 404, or client-node's discovery not listing it (KubernetesObjectApi throws
 * "Unrecognized API version and kind" before any request when the group version has no such resource).
 */
function kindMissing(err: unknown): boolean {
  return httpStatusOf(err) === 404 || /Unrecognized API version and kind/.test((err as Error)?.message ?? '');
}

function explain(err: unknown): string {
  if (kindMissing(err))
    return 'not found (are the CRDs installed? npm run lab:up installs them; or kubectl apply --server-side -f system/manifests/gateway-api/standard-install.yaml -f system/manifests/crds/)';
  const status = httpStatusOf(err);
  if (status === 403) return 'forbidden (check the ClusterRole gwvendor)';
  return (err as Error)?.message ?? String(err);
}

/**
 * client-node's Watch as a ListWatchSource watch: resolves when the stream ends (or went quiet for the Watch's 30 s
 * inactivity timeout: watch again from the last resourceVersion, as client-node's own informer does), rejects on
 * failure (a refused watch with the `statusCode` of the answer).
 */
function watchWith(
  watch: Watch,
  path: string,
  params: Record<string, string | boolean | undefined>,
  onEvent: (e: WatchEventLine) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let request: AbortController | undefined;
    const onAbort = () => request?.abort();
    const done = (err: any) => {
      signal.removeEventListener('abort', onAbort);
      if (!err || (err.name === 'TimeoutError' && !signal.aborted)) resolve();
      else reject(err);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    watch
      .watch(path, params, (type: string, object: any) => onEvent({ type, object }), done)
      .then((r) => {
        request = r;
        if (signal.aborted) r.abort();
      }, done);
  });
}

/** The source of one watched kind's loop: its list through KubernetesObjectApi (with its label selector). */
function sourceFor(objApi: KubernetesObjectApi, watch: Watch, w: WatchedKind): ListWatchSource {
  return {
    list: async (_path, params) =>
      (await objApi.list(
        w.apiVersion,
        w.kind,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        params.labelSelector,
      )) as any,
    watch: (path, params, onEvent, signal) => watchWith(watch, path, params, onEvent, signal),
  };
}

export function startInformers(
  kc: KubeConfig,
  inputFor: (kind: string) => InputCollection<any> | undefined,
  log: Logger,
  metrics?: Metrics,
): InformerSet {
  const objApi = KubernetesObjectApi.makeApiClient(kc);
  const watch = new Watch(kc);
  let stopped = false;
  const synced = new Set<string>();
  let resolveSynced!: () => void;
  const syncedPromise = new Promise<void>((r) => {
    resolveSynced = r;
  });
  const loops: ListWatch[] = [];

  for (const w of WATCHED) {
    const input = inputFor(w.kind);
    if (!input) throw new Error(`no input collection for ${w.kind}`);
    let failures = 0;
    const loop = new ListWatch(
      sourceFor(objApi, watch, w),
      w.path,
      (type, o) => {
        if (stopped) return;
        if (type === 'SYNC') {
          log.debug('listed', { resource: w.resource, items: input.size() });
          if (synced.has(w.resource)) return;
          synced.add(w.resource);
          input.markSynced();
          log.info('synced', { resource: w.resource, items: input.size() });
          if (synced.size === WATCHED.length) resolveSynced();
        } else if (type === 'DELETED') {
          input.delete(namespacedName(o!));
        } else input.upsert(o);
      },
      log,
      {
        ...(w.labelSelector ? { params: { labelSelector: w.labelSelector } } : {}),
        ...(w.transform ? { transform: w.transform } : {}),
        initialBackoffMs: 500,
        maxBackoffMs: 30_000,
        // A missing CRD may be installed later (lab/install.ts applies them after the control plane may have started).
        onNotFound: 'retry',
        onError: (err, retryInMs) => {
          if (stopped) return;
          // An optional kind without its CRD: synced with no objects (and listed again once the CRD is there).
          if (w.optional && kindMissing(err) && !synced.has(w.resource)) {
            synced.add(w.resource);
            input.markSynced();
            log.info('synced (CRD not installed)', { resource: w.resource, items: 0 });
            if (synced.size === WATCHED.length) resolveSynced();
          }
          failures++;
          metrics?.informerRestarts.inc({ resource: w.resource });
          const level = failures > 3 ? 'warn' : 'info';
          log[level]('informer stopped; restarting', { resource: w.resource, reason: explain(err), retryInMs });
        },
      },
    );
    loops.push(loop);
    loop.start();
  }
  return {
    synced: syncedPromise,
    isSynced: () => synced.size === WATCHED.length,
    async stop() {
      stopped = true;
      for (const l of loops) l.stop();
    },
  };
}
