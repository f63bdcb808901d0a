// The shape the queue-driven controllers share, as kube-controller-manager's: informers (client/list-watch.ts) keep
// the objects a controller reads, their events put keys on a work queue, and sync(key) reconciles one object, one
// sync per key at a time. A subclass declares its informers as fields (informer() returns the store) and its sync.
import type { Logger } from '../../../system/shared/log.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { Informer, type InformerOptions } from '../client/list-watch.ts';

export abstract class Controller {
  protected readonly client: KubeClient;
  protected readonly log: Logger;
  protected readonly queue: KeyedQueue;
  private readonly informers: Informer[] = [];

  /** `what` names the controller in the failed-sync warning, `field` the key there (`{service: 'ns/name'}`). */
  constructor(client: KubeClient, log: Logger, failure: { what: string; field: string }) {
    this.client = client;
    this.log = log;
    this.queue = new KeyedQueue(
      (k) => this.sync(k),
      (k, err) => this.log.warn(`${failure.what} sync failed`, { [failure.field]: k, err: err as Error }),
    );
  }

  /** Reconciles the object of `key`; a throw retries it after a pause. */
  protected abstract sync(key: string): Promise<void>;

  /** An informer over `path`, started with the controller; returns its store. */
  protected informer(path: string, opts: InformerOptions = {}): Map<string, any> {
    const i = new Informer(this.client, path, this.log, opts);
    this.informers.push(i);
    return i.store;
  }

  start(): void {
    for (const i of this.informers) i.start();
  }

  async stop(): Promise<void> {
    this.queue.stop();
    for (const i of this.informers) i.stop();
  }
}

/** A serial queue per key with coalescing: at most one sync running and one pending per key. */
export class KeyedQueue {
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private readonly fn: (key: string) => Promise<void>;
  private readonly onError: (key: string, err: unknown) => void;
  private stopped = false;

  constructor(fn: (key: string) => Promise<void>, onError: (key: string, err: unknown) => void) {
    this.fn = fn;
    this.onError = onError;
  }

  add(key: string, delayMs = 0): void {
    if (this.stopped) return;
    if (delayMs > 0) {
      setTimeout(() => this.add(key), delayMs).unref();
      return;
    }
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    this.running.add(key);
    void (async () => {
      do {
        this.again.delete(key);
        try {
          await this.fn(key);
        } catch (err) {
          // Syncs still in flight when the controller stops fail against a closed server: not worth a warning.
          if (this.stopped) break;
          this.onError(key, err);
          setTimeout(() => this.add(key), 500).unref();
        }
      } while (this.again.has(key) && !this.stopped);
      this.running.delete(key);
    })();
  }

  stop(): void {
    this.stopped = true;
  }
}
