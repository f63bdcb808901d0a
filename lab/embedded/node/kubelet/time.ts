// Time as the kubelet writes it: RFC 3339 timestamps in whole seconds, durations in Go's time.Duration format
// ("back-off 10s", "back-off 2m40s"), and a sleep that a pod's stop cuts short.

/** RFC 3339 in whole seconds, as Kubernetes timestamps are written. */
export const rfc3339 = (d = new Date()) => d.toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * A duration as Go's time.Duration prints it, which is how the kubelet writes back-offs ("back-off 10s",
 * "back-off 2m40s"): `250ms`, `1.5s`, `5m0s`. Rounded to the millisecond.
 */
export function goDuration(ms: number): string {
  const t = Math.round(ms);
  if (t === 0) return '0s';
  if (t < 1000) return `${t}ms`;
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor((t % 3_600_000) / 60_000);
  const s = `${(t % 60_000) / 1000}s`;
  return h ? `${h}h${m}m${s}` : m ? `${m}m${s}` : s;
}

/** Resolves after `ms` (at the next turn when it is already past: a due time minus now may be just below 0), or at
 * once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    // Node warns of a negative delay (TimeoutNegativeWarning) and waits 1 ms: the token refresh loop's due time
    // minus Date.now() was -0.6 ms in CI's unit run.
    const t = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
