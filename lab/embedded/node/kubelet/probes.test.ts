// The probe schedule of ProbeWorker (probes.ts) against the kubelet's (pkg/kubelet/prober/worker.go): a probe runs
// after initialDelaySeconds, then every periodSeconds; failureThreshold failures in a row flip it to failed. The fast
// start: an unready container's readiness probe is retried every FAST_START_MS, as the kubelet's manual trigger
// (prober_manager.go UpdatePodStatus) runs it between ticks, so a pod is Ready as soon as it answers, for at most
// failureThreshold periods, with those early failures unreported. Timers and the clock are faked: the schedule is
// asserted, not the speed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAST_START_MS, type ProbeKind, type ProbeTarget, ProbeWorker } from './probes.ts';

/** A container whose exec probe succeeds while `ready`, recording when each probe ran. */
function fakeContainer() {
  const state = { ready: false, probedAt: [] as number[] };
  const target: ProbeTarget = {
    podIP: '127.65.0.9',
    namedPort: () => undefined,
    effectivePort: (p) => p,
    exec: async () => {
      state.probedAt.push(performance.now());
      return state.ready ? { exitCode: 0, output: '' } : { exitCode: 1, output: 'not yet' };
    },
  };
  return { state, target };
}

function worker(kind: ProbeKind, probe: object, target: ProbeTarget) {
  const changes: { at: number; ok: boolean }[] = [];
  const failures: number[] = [];
  const w = new ProbeWorker(
    kind,
    { exec: { command: ['check'] }, ...probe },
    target,
    (ok) => changes.push({ at: performance.now(), ok }),
    () => failures.push(performance.now()),
  );
  return { w, changes, failures };
}

describe('ProbeWorker schedule', () => {
  let t0 = 0;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    t0 = performance.now();
  });
  afterEach(() => vi.useRealTimers());

  it('makes a readiness probe succeed as soon as the container answers within its first period, not a tick later', async () => {
    const { state, target } = fakeContainer();
    const { w, changes, failures } = worker('readiness', { periodSeconds: 2, failureThreshold: 3 }, target);
    w.start();
    await vi.advanceTimersByTimeAsync(1_700);
    expect(changes).toEqual([]);
    state.ready = true;
    await vi.advanceTimersByTimeAsync(FAST_START_MS);
    // Ready within one fast-start interval of answering (a doubling back-off probed at 1.55 s and next at 3.15 s).
    expect(changes).toEqual([{ at: expect.any(Number), ok: true }]);
    expect(changes[0].at - t0).toBeLessThanOrEqual(1_700 + FAST_START_MS);
    expect(failures).toEqual([]);
    w.stop();
  });

  it('keeps the fast start to failureThreshold periods, then reports failures every period as the kubelet does', async () => {
    const { state, target } = fakeContainer();
    const { w, changes, failures } = worker('readiness', { periodSeconds: 2, failureThreshold: 3 }, target);
    w.start();
    await vi.advanceTimersByTimeAsync(5_990);
    expect(failures).toEqual([]);
    const fastProbes = state.probedAt.length;
    expect(fastProbes).toBeGreaterThanOrEqual(5_990 / FAST_START_MS - 1);
    await vi.advanceTimersByTimeAsync(4_100);
    // The window ended at 6 s: from then on one probe per period, each failure reported; 3 in a row flip it.
    expect(failures.map((at) => Math.round((at - t0) / 100) * 100)).toEqual([6_000, 8_000, 10_000]);
    expect(changes).toEqual([{ at: failures[2], ok: false }]);
    expect(state.probedAt.length - fastProbes).toBe(3);
    // A later success needs its tick: the fast start is over.
    state.ready = true;
    await vi.advanceTimersByTimeAsync(1_900);
    expect(changes.length).toBe(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(changes[1]).toEqual({ at: expect.any(Number), ok: true });
    w.stop();
  });

  it('runs liveness probes after initialDelaySeconds and every periodSeconds only (no fast start)', async () => {
    const { state, target } = fakeContainer();
    const { w, failures } = worker('liveness', { initialDelaySeconds: 1, periodSeconds: 2 }, target);
    w.start();
    await vi.advanceTimersByTimeAsync(5_500);
    expect(state.probedAt.map((at) => Math.round(at - t0))).toEqual([1_000, 3_000, 5_000]);
    expect(failures.length).toBe(3);
    w.stop();
  });
});
