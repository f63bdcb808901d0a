// A resilient list-watch loop over the embedded cluster's client (kube-client.ts): list, then watch from the list's
// resourceVersion; relist on 410 Expired, re-watch with back-off on errors. client-node's informer stops on errors,
// so the controllers and the node agent, which must not stop, use this loop.
import type { ServedObject } from '../../../system/shared/kobject.ts';
import type { Logger } from '../../../system/shared/log.ts';
import { type KubeClient, KubeError } from './kube-client.ts';

export type WatchEvent = 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC';

/**
 * List, then watch from the list's resourceVersion, forever: on 410 it relists (reporting objects that vanished as
 * DELETED), on a closed or failed stream it re-watches after a back-off. `onEvent('SYNC')` fires after each list.
 */
export class ListWatch {
  private stopped = false;
  private abort?: AbortController;
  private known = new Map<string, ServedObject>();
  private readonly client: KubeClient;
  private readonly path: string;
  private readonly onEvent: (type: WatchEvent, obj?: ServedObject) => void;
  private readonly log: Logger;

  constructor(client: KubeClient, path: string, onEvent: (type: WatchEvent, obj?: ServedObject) => void, log: Logger) {
    this.client = client;
    this.path = path;
    this.onEvent = onEvent;
    this.log = log;
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  objects(): ServedObject[] {
    return [...this.known.values()];
  }

  private async loop(): Promise<void> {
    let rv = '';
    let delay = 100;
    while (!this.stopped) {
      try {
        if (!rv) {
          const list = await this.client.request('GET', this.path);
          const seen = new Set<string>();
          for (const o of list.items as ServedObject[]) {
            seen.add(o.metadata.uid);
            const had = this.known.get(o.metadata.uid);
            this.known.set(o.metadata.uid, o);
            if (!had || had.metadata.resourceVersion !== o.metadata.resourceVersion)
              this.onEvent(had ? 'MODIFIED' : 'ADDED', o);
          }
          for (const [uid, o] of this.known) {
            if (!seen.has(uid)) {
              this.known.delete(uid);
              this.onEvent('DELETED', o);
            }
          }
          rv = list.metadata.resourceVersion;
          this.onEvent('SYNC');
        }
        rv = await this.watchOnce(rv);
        delay = 100;
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof KubeError && e.code === 404) {
          // The resource type went away (a deleted CRD): stop quietly.
          return;
        }
        this.log.debug('list-watch retry', { path: this.path, err: e as Error });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  /** Resolves with the resourceVersion to continue from ('' = relist). */
  private async watchOnce(rv: string): Promise<string> {
    let last = rv;
    let expired = false;
    const abort = new AbortController();
    this.abort = abort;
    if (this.stopped) abort.abort();
    try {
      await this.client.watch(
        this.path,
        { resourceVersion: rv, allowWatchBookmarks: true },
        ({ type, object: obj }) => {
          if (type === 'ERROR') {
            if (obj?.code === 410) expired = true;
            return;
          }
          if (obj?.metadata?.resourceVersion) last = obj.metadata.resourceVersion;
          if (type === 'BOOKMARK') return;
          if (type === 'DELETED') this.known.delete(obj.metadata.uid);
          else this.known.set(obj.metadata.uid, obj);
          this.onEvent(type as WatchEvent, obj);
        },
        abort.signal,
      );
    } catch (err) {
      if (!expired && !this.stopped) throw err;
    }
    return expired ? '' : last;
  }
}

/** How an informer keys its objects. */
export type StoreKey = (o: ServedObject) => string;

/** client-go's MetaNamespaceKeyFunc: `namespace/name`, or `name` for a cluster-scoped object. */
export const namespacedName: StoreKey = (o) =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;

/** By uid: for a cache that must keep apart the objects a name has stood for (an owner's dependents, say). */
export const byUid: StoreKey = (o) => o.metadata.uid;

export interface InformerOptions {
  /** How `store` is keyed; namespacedName by default. */
  key?: StoreKey;
  /** Each event after `store` has taken it, with the object's previous version there; SYNC after each list. */
  onEvent?: (type: WatchEvent, obj: any, prev: any) => void;
}

/**
 * client-go's informer with its store: a ListWatch whose objects are kept in `store` by key, the events passed on
 * after the store has them. The store is a plain Map the owner may also write to, as client-go's controllers assume
 * their own writes before the watch brings them back.
 */
export class Informer {
  readonly store = new Map<string, any>();
  private readonly lw: ListWatch;

  constructor(client: KubeClient, path: string, log: Logger, opts: InformerOptions = {}) {
    const key = opts.key ?? namespacedName;
    this.lw = new ListWatch(
      client,
      path,
      (type, o) => {
        if (!o) {
          opts.onEvent?.(type, undefined, undefined);
          return;
        }
        const k = key(o);
        const prev = this.store.get(k);
        if (type === 'DELETED') this.store.delete(k);
        else this.store.set(k, o);
        opts.onEvent?.(type, o, prev);
      },
      log,
    );
  }

  start(): void {
    this.lw.start();
  }

  stop(): void {
    this.lw.stop();
  }
}
