// The project's one list-watch loop and informer, as client-go's reflector and shared informer
// (k8s.io/client-go/tools/cache/reflector.go, shared_informer.go; the protocol in "Efficient detection of changes",
// https://kubernetes.io/docs/reference/using-api/api-concepts/): list, then watch from the list's resourceVersion with
// bookmarks; on 410 Gone/Expired (an ERROR event in the stream or the watch's own HTTP answer) list again, reporting
// the objects that vanished meanwhile as DELETED; on any other failure watch again after an exponential back-off.
// It knows no HTTP client: it talks to a ListWatchSource, which the embedded cluster's KubeClient
// (lab/embedded/client/kube-client.ts) and the control plane's client-node adapter (system/controlplane/kube/
// informers.ts) each implement, so that both run this loop and neither loads the other's client.
import type { ServedObject } from '../kobject.ts';
import type { Logger } from '../log.ts';

export type WatchEvent = 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC';

/** A watch event as the API server streams it (one JSON object per line). */
export interface WatchEventLine {
  type: string;
  object: any;
}

/** A list answer: the items and the list's resourceVersion to watch from. */
export interface ObjectList {
  items: any[];
  metadata?: { resourceVersion?: string };
}

/** What the loop needs of an HTTP client. */
export interface ListWatchSource {
  /** GET of the collection `path` with `params` (a labelSelector, say) as query parameters. */
  list(path: string, params: Record<string, string>): Promise<ObjectList>;
  /**
   * Watches `path` (`?watch=true` and `params` added), calling `onEvent` for each event line: resolves when the stream
   * ends, rejects when it fails or is refused (with an error httpStatusOf can read), stops when `signal` aborts.
   */
  watch(
    path: string,
    params: Record<string, string | boolean | undefined>,
    onEvent: (e: WatchEventLine) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /** The HTTP status of a failed list or watch; httpStatusOf when not given. */
  statusOf?(err: unknown): number | undefined;
}

/**
 * The HTTP status an error carries, undefined for a transport failure: `statusCode` (client-node's Watch) or a numeric
 * `code` (client-node's ApiException, KubeError).
 */
export function httpStatusOf(err: unknown): number | undefined {
  const e = err as { statusCode?: unknown; code?: unknown } | undefined;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return typeof e?.code === 'number' ? e.code : undefined;
}

export interface ListWatchOptions {
  /** Query parameters of both the list and the watch (a `labelSelector`, say). */
  params?: Record<string, string>;
  /** The first back-off after a failure (default 100 ms), doubled at each failure in a row up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  /** Default 5 s. The back-off starts again from `initialBackoffMs` after a list or a watch that went well. */
  maxBackoffMs?: number;
  /**
   * 'stop' (the default): a 404 ends the loop quietly (the resource type went away: a deleted CRD). 'retry': a 404 is
   * a failure as any other (a controller started before its CRDs are installed waits for them).
   */
  onNotFound?: 'stop' | 'retry';
  /** Each failure, before the back-off of `retryInMs`; by default a debug line 'list-watch retry'. */
  onError?: (err: unknown, retryInMs: number) => void;
  /**
   * What is kept and reported of each listed or watched object (client-go's cache TransformFunc): the loop's own
   * store holds the transformed object, so a kind read for a few fields costs only those.
   */
  transform?: (o: ServedObject) => ServedObject;
}

/**
 * List, then watch from the list's resourceVersion, until stopped: on 410 it relists (reporting objects that vanished
 * as DELETED), on a closed stream it watches again, on a failure it does so after a back-off. `onEvent('SYNC')` fires
 * after each list, once its objects have been reported.
 */
export class ListWatch {
  private stopped = false;
  private abort?: AbortController;
  private wake?: () => void;
  private readonly known = new Map<string, ServedObject>();
  private readonly source: ListWatchSource;
  private readonly path: string;
  private readonly onEvent: (type: WatchEvent, obj?: ServedObject) => void;
  private readonly log: Logger;
  private readonly opts: ListWatchOptions;

  constructor(
    source: ListWatchSource,
    path: string,
    onEvent: (type: WatchEvent, obj?: ServedObject) => void,
    log: Logger,
    opts: ListWatchOptions = {},
  ) {
    this.source = source;
    this.path = path;
    this.onEvent = onEvent;
    this.log = log;
    this.opts = opts;
  }

  /** Starts the loop; the promise resolves when it ends (stopped, or a 404 with onNotFound 'stop'). */
  start(): Promise<void> {
    return this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
  }

  objects(): ServedObject[] {
    return [...this.known.values()];
  }

  private statusOf(err: unknown): number | undefined {
    return this.source.statusOf ? this.source.statusOf(err) : httpStatusOf(err);
  }

  private async loop(): Promise<void> {
    const initial = this.opts.initialBackoffMs ?? 100;
    const max = this.opts.maxBackoffMs ?? 5000;
    let rv = '';
    let delay = initial;
    while (!this.stopped) {
      try {
        if (!rv) {
          rv = await this.relist();
          delay = initial;
          if (this.stopped) return;
        }
        rv = await this.watchOnce(rv);
        delay = initial;
      } catch (e) {
        if (this.stopped) return;
        const status = this.statusOf(e);
        if (status === 410) {
          rv = ''; // the watch was refused as too old: list again, at once
          continue;
        }
        if (status === 404 && (this.opts.onNotFound ?? 'stop') === 'stop') return;
        if (this.opts.onError) this.opts.onError(e, delay);
        else this.log.debug('list-watch retry', { path: this.path, err: e as Error, retryInMs: delay });
        await this.sleep(delay);
        delay = Math.min(delay * 2, max);
      }
    }
  }

  /** Lists, reports what changed since the last list (vanished objects as DELETED) and SYNC; the list's version. */
  private async relist(): Promise<string> {
    const list = await this.source.list(this.path, this.opts.params ?? {});
    if (this.stopped) return '';
    const seen = new Set<string>();
    const tf = this.opts.transform;
    for (const item of list.items as ServedObject[]) {
      const o = tf ? tf(item) : item;
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
    this.onEvent('SYNC');
    return list.metadata?.resourceVersion ?? '';
  }

  /** Resolves with the resourceVersion to continue from ('' = relist). */
  private async watchOnce(rv: string): Promise<string> {
    let last = rv;
    let expired = false;
    const abort = new AbortController();
    this.abort = abort;
    if (this.stopped) abort.abort();
    try {
      await this.source.watch(
        this.path,
        { ...this.opts.params, resourceVersion: rv, allowWatchBookmarks: true },
        ({ type, object: obj }) => {
          if (this.stopped) return;
          if (type === 'ERROR') {
            if (obj?.code === 410) expired = true;
            return;
          }
          if (obj?.metadata?.resourceVersion) last = obj.metadata.resourceVersion;
          if (type === 'BOOKMARK') return;
          const o = this.opts.transform ? this.opts.transform(obj) : obj;
          if (type === 'DELETED') this.known.delete(o.metadata.uid);
          else this.known.set(o.metadata.uid, o);
          this.onEvent(type as WatchEvent, o);
        },
        abort.signal,
      );
    } catch (err) {
      if (!expired && !this.stopped) throw err;
    }
    return expired ? '' : last;
  }

  /** Waits `ms`, or less if stopped meanwhile. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}

/** How an informer keys its objects. */
export type StoreKey = (o: ServedObject) => string;

/** client-go's MetaNamespaceKeyFunc: `namespace/name`, or `name` for a cluster-scoped object. */
export const namespacedName: StoreKey = (o) =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;

/** By uid: for a cache that must keep apart the objects a name has stood for (an owner's dependents, say). */
export const byUid: StoreKey = (o) => o.metadata.uid;

export interface InformerOptions extends ListWatchOptions {
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

  constructor(source: ListWatchSource, path: string, log: Logger, opts: InformerOptions = {}) {
    const key = opts.key ?? namespacedName;
    this.lw = new ListWatch(
      source,
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
      opts,
    );
  }

  start(): Promise<void> {
    return this.lw.start();
  }

  stop(): void {
    this.lw.stop();
  }
}
