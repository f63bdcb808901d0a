// The kubelet's sleep: a delay already past (a due time minus now, just below 0) resolves at the next turn without
// Node's TimeoutNegativeWarning; an abort resolves it at once.
import { describe, expect, it } from 'vitest';
import { sleep } from './time.ts';

describe('sleep', () => {
  it('a negative delay resolves without a warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      await sleep(-0.60107421875, new AbortController().signal);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('TimeoutNegativeWarning');
  });

  it('an abort ends it at once', async () => {
    const ac = new AbortController();
    const started = performance.now();
    const slept = sleep(60_000, ac.signal);
    ac.abort();
    await slept;
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
