// What bench:proxy's parent process sees over a measured window, beside the latencies: each server process's CPU per
// request (/proc), the machine's CPU pressure (PSI), the largest event-loop delay of the (idle) bench process itself,
// and the load average. The generator's own event-loop delay uses the same probe (ELD_RESOLUTION_MS, loopDelayMs).
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { cpuPressureUs, cpuSeconds } from '../shared/proc.ts';
import { round2, round3 } from '../shared/stats.ts';

/**
 * Event-loop delay probes sample every ELD_RESOLUTION_MS (a coarse timer: the probe itself must not load the
 * generator or the bench process); the histogram holds the time between samples, so the delay is that minus the
 * resolution.
 */
export const ELD_RESOLUTION_MS = 10;
export const loopDelayMs = (ns: number) => round3(Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS));

/** What the parent saw over a measured window: each process's CPU per request and the machine's CPU pressure. */
export interface WindowSample {
  /** CPU µs per request of each process given (by name). */
  cpuUsPerRequest: Record<string, number>;
  /** Share of the window during which some task waited for a CPU (PSI "some"), in %. */
  cpuPressurePct: number | null;
  /**
   * The largest event-loop delay of this (bench) process over the window. During an open-loop window it only waits,
   * so this is what the machine alone (scheduling, other tenants) does to any process, servers included.
   */
  idleLoopDelayMaxMs: number;
  /** Load average (1 min) at the end of the window. */
  load1: number;
}

/** Samples the processes `pids` (name → pid) from start() to end(); end() with the window's request count. */
export function windowSampler(pids: Record<string, number>): { start(): void; end(requests: number): WindowSample } {
  let cpu0: Record<string, number> = {};
  let psi0: number | undefined;
  let t0 = 0;
  let sample: WindowSample | undefined;
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  return {
    start() {
      cpu0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
      psi0 = cpuPressureUs();
      t0 = performance.now();
      eld.enable();
    },
    end(requests) {
      if (sample) return sample;
      eld.disable();
      const wallUs = (performance.now() - t0) * 1000;
      const psi1 = cpuPressureUs();
      sample = {
        cpuUsPerRequest: Object.fromEntries(
          Object.entries(pids).map(([n, pid]) => [
            n,
            round2(((cpuSeconds(pid) - cpu0[n]!) * 1e6) / Math.max(1, requests)),
          ]),
        ),
        cpuPressurePct: psi0 !== undefined && psi1 !== undefined ? round2(((psi1 - psi0) / wallUs) * 100) : null,
        idleLoopDelayMaxMs: loopDelayMs(eld.max),
        load1: round2(loadavg()[0]!),
      };
      return sample;
    },
  };
}

/** `proxy 120, app 45, generator 40`: CPU µs per request of each process of a window. */
export function fmtCpu(w: WindowSample): string {
  return Object.entries(w.cpuUsPerRequest)
    .map(([n, us]) => `${n} ${Math.round(us)}`)
    .join(', ');
}
