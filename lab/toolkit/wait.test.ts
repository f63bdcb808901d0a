// waitFor (wait.ts): polls until the probe says ok, with the last observation in the timeout error; a change reported
// by `changes` (a watch event) makes it probe again at once instead of at the next interval. Fake timers: the order
// of probes is asserted, not the speed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WaitTimeout, waitFor } from './wait.ts';

describe('waitFor', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => vi.useRealTimers());

  it('probes again as soon as a change is reported, not an interval later; then unsubscribes', async () => {
    let ready = false;
    let probes = 0;
    let notify: (() => void) | undefined;
    let unsubscribed = false;
    const done = waitFor(
      'ready',
      async () => {
        probes++;
        return { ok: ready, value: 'yes', seen: ready };
      },
      {
        intervalMs: 60_000,
        timeoutMs: 120_000,
        changes: (n) => {
          notify = n;
          return () => {
            unsubscribed = true;
          };
        },
      },
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(probes).toBe(1);
    ready = true;
    notify!();
    await vi.advanceTimersByTimeAsync(0);
    await expect(done).resolves.toBe('yes');
    expect(probes).toBe(2);
    expect(unsubscribed).toBe(true);
  });

  it('without changes polls every interval, and times out with what it saw last', async () => {
    let probes = 0;
    const done = waitFor('never', async () => ({ ok: false, seen: `probe ${++probes}` }), {
      intervalMs: 100,
      timeoutMs: 1_000,
    });
    const failed = expect(done).rejects.toThrow(WaitTimeout);
    await vi.advanceTimersByTimeAsync(1_100);
    await failed;
    await expect(done).rejects.toThrow(/waiting for never; last seen: probe 11/);
  });
});
