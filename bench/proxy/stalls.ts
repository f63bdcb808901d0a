// Where bench:proxy's slowest fixed-rate requests fall: the stalls of the (idle) bench process while the rounds run,
// and the share of each path's slow requests due in a stall window against the share of all its requests. Far more
// slow requests than the base rate means the tail is made of the moments when the machine stalled everything.
import { round2, round3 } from '../shared/stats.ts';

/** A stall of this (idle) bench process: when it began (ms since the epoch) and how late its timer fired. */
export interface Stall {
  at: number;
  ms: number;
}

export const STALL_TICK_MS = 2;
export const STALL_MIN_MS = 3;
/** A request is "in" a stall when it was due from this long before the stall began to shortly after it ended. */
export const STALL_BEFORE_MS = 30;
export const STALL_AFTER_MS = 5;

/**
 * Records the stalls of this process while it idles through the fixed-rate rounds: a 2 ms timer firing 3 ms or more
 * late means no CPU was given to a runnable process for that long, which is what the machine (its scheduler with
 * the generator, the servers and everything else on the two CPUs) does to every process at that moment.
 */
export function stallRecorder(): { stop(): Stall[] } {
  const stalls: Stall[] = [];
  let last = performance.now();
  const t = setInterval(() => {
    const now = performance.now();
    const late = now - last - STALL_TICK_MS;
    if (late >= STALL_MIN_MS) stalls.push({ at: performance.timeOrigin + last, ms: round3(late) });
    last = now;
  }, STALL_TICK_MS);
  return {
    stop() {
      clearInterval(t);
      return stalls;
    },
  };
}

/** Whether a due time falls in one of the stalls' windows (from STALL_BEFORE_MS before to STALL_AFTER_MS after). */
function inStallWindow(stalls: Stall[]): (due: number) => boolean {
  const windows = stalls
    .map((x) => [x.at - STALL_BEFORE_MS, x.at + x.ms + STALL_AFTER_MS] as const)
    .sort((a, b) => a[0] - b[0]);
  const starts = windows.map((w) => w[0]);
  // The furthest end of any window starting at or before index i (windows may overlap).
  const reach: number[] = [];
  for (let i = 0; i < windows.length; i++) reach.push(Math.max(windows[i]![1], i > 0 ? reach[i - 1]! : -Infinity));
  return (due) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! <= due) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && reach[found]! >= due;
  };
}

/**
 * How the slowest requests of a path (at or above `threshold`) line up with the stalls: `requestsAt` holds, per
 * round, (due time, latency) pairs as the generator wrote them.
 */
export function slowRequestsInStalls(
  requestsAt: Float64Array[],
  threshold: number,
  stalls: Stall[],
): { slow: number; slowInStallPct: number; allInStallPct: number } {
  const inStall = inStallWindow(stalls);
  let all = 0;
  let allIn = 0;
  let slow = 0;
  let slowIn = 0;
  for (const pairs of requestsAt) {
    for (let i = 0; i < pairs.length; i += 2) {
      const inside = inStall(pairs[i]!);
      all++;
      if (inside) allIn++;
      if (pairs[i + 1]! >= threshold) {
        slow++;
        if (inside) slowIn++;
      }
    }
  }
  return {
    slow,
    slowInStallPct: slow === 0 ? 0 : round2((slowIn / slow) * 100),
    allInStallPct: all === 0 ? 0 : round2((allIn / all) * 100),
  };
}
