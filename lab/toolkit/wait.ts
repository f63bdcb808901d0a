// Polling with a deadline, for conditions that become true eventually. The timeout error says what was awaited and
// what was last seen, so a failing scenario explains itself. A wait can also be woken by a change (a watch event),
// so that it checks again at once instead of at its next poll.

export class WaitTimeout extends Error {
  readonly last: unknown;
  constructor(what: string, ms: number, last: unknown) {
    const lastText = last instanceof Error ? last.message : typeof last === 'string' ? last : JSON.stringify(last);
    super(
      `timed out after ${(ms / 1000).toFixed(1)} s waiting for ${what}${last !== undefined ? `; last seen: ${lastText?.slice(0, 800)}` : ''}`,
    );
    this.last = last;
  }
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /**
   * Subscribes to changes of what is awaited: the wait calls `notify` on each, which makes it probe again now rather
   * than at the next interval. Returns the unsubscribe function, called when the wait ends.
   */
  changes?: (notify: () => void) => () => void;
}

/**
 * Calls `probe` until it returns `{ ok: true, value }`. A probe that throws counts as "not yet" (its error is the last
 * observation), so transient API errors do not end the wait early.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<{ ok: boolean; value?: T; seen?: unknown }>,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  // A change seen while probing makes the next probe immediate; one seen while sleeping ends the sleep.
  let changed = false;
  let wake: (() => void) | undefined;
  const unsubscribe = opts.changes?.(() => {
    changed = true;
    wake?.();
  });
  try {
    for (;;) {
      changed = false;
      try {
        const r = await probe();
        if (r.ok) return r.value as T;
        last = r.seen;
      } catch (err) {
        last = err;
      }
      if (performance.now() >= deadline) throw new WaitTimeout(what, timeoutMs, last);
      if (!changed) await sleepUntilChanged(Math.min(intervalMs, Math.max(0, deadline - performance.now())));
    }
  } finally {
    unsubscribe?.();
  }

  function sleepUntilChanged(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }
}
