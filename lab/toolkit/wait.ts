// Polling with a deadline, for conditions that become true eventually. The timeout error says what was awaited and
// what was last seen, so a failing scenario explains itself.
import { setTimeout as sleep } from 'node:timers/promises';

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
  for (;;) {
    try {
      const r = await probe();
      if (r.ok) return r.value as T;
      last = r.seen;
    } catch (err) {
      last = err;
    }
    if (performance.now() >= deadline) throw new WaitTimeout(what, timeoutMs, last);
    await sleep(intervalMs);
  }
}
