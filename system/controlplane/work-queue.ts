// A keyed work queue, as client-go's workqueue serves controllers: the latest item per key, worked one at a time in
// the order the keys were queued; a failed item is retried after a delay that grows per key with each failure in a
// row (a success resets it), with what is current for its key by then. The status writer and the deployer use it.
export interface WorkQueueOptions<T> {
  work(item: T): Promise<void>;
  /** A failure (`attempt` 1, 2, ... in a row for the key): the delay before a retry in ms, or undefined for none. */
  failed(item: T, err: unknown, attempt: number): number | undefined;
  /** What to queue when the delay is over (the key's current item), or undefined for nothing. */
  retry(item: T): T | undefined;
  /** The queue ran empty after `ms` of work. */
  drained?(ms: number): void;
}

export class WorkQueue<T extends { key: string }> {
  private readonly queue = new Map<string, T>();
  private readonly attempts = new Map<string, number>();
  private readonly opts: WorkQueueOptions<T>;
  private running = false;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(opts: WorkQueueOptions<T>) {
    this.opts = opts;
  }

  add(item: T): void {
    this.queue.set(item.key, item);
    if (!this.running) {
      this.running = true;
      setImmediate(() => this.drain());
    }
  }

  /** No more work starts; retries still waiting are dropped. */
  stop(): void {
    this.stopped = true;
  }

  /** Resolves when the queue is empty and no work is in flight. */
  idle(): Promise<void> {
    if (!this.running && !this.queue.size) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async drain(): Promise<void> {
    const t0 = performance.now();
    while (this.queue.size && !this.stopped) {
      const [key, item] = this.queue.entries().next().value as [string, T];
      this.queue.delete(key);
      try {
        await this.opts.work(item);
        this.attempts.delete(key);
      } catch (err) {
        const n = (this.attempts.get(key) ?? 0) + 1;
        this.attempts.set(key, n);
        const delay = this.opts.failed(item, err, n);
        if (delay === undefined) continue;
        setTimeout(() => {
          if (this.stopped) return;
          const next = this.opts.retry(item);
          if (next) this.add(next);
        }, delay).unref();
      }
    }
    this.running = false;
    this.opts.drained?.(performance.now() - t0);
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
