// How bench:proxy places slow requests against the bench process's stalls: a request is "in" a stall when it was due
// from 30 ms before the stall began to 5 ms after it ended, overlapping stall windows included; the shares are of the
// slow requests (latency at or above the threshold) and of all requests.
import { describe, expect, it } from 'vitest';
import { type Stall, slowRequestsInStalls } from './stalls.ts';

/** (due time, latency) pairs as the generator writes them. */
const pairs = (...xs: Array<[number, number]>) => Float64Array.from(xs.flat());

describe('slowRequestsInStalls', () => {
  const stalls: Stall[] = [
    { at: 1000, ms: 10 }, // window 970..1015
    { at: 2000, ms: 50 }, // window 1970..2055
    { at: 2040, ms: 3 }, // window 2010..2048, inside the previous one
  ];

  it('counts the requests due in a stall window, at its edges too, among the slow ones and among all', () => {
    const requests = pairs(
      [969, 20], // slow, just before the first window
      [970, 20], // slow, at its start
      [1015, 1], // fast, at its end
      [1016, 20], // slow, just after
      [2054, 20], // slow, in the second window (past the third's end)
      [3000, 1], // fast, in none
    );
    expect(slowRequestsInStalls([requests], 10, stalls)).toEqual({
      slow: 4,
      slowInStallPct: 50,
      allInStallPct: 50,
    });
  });

  it('pools the rounds, and gives 0% without slow requests or without stalls', () => {
    const a = pairs([975, 30], [500, 1]);
    const b = pairs([2000, 30], [5000, 1]);
    expect(slowRequestsInStalls([a, b], 10, stalls)).toEqual({ slow: 2, slowInStallPct: 100, allInStallPct: 50 });
    expect(slowRequestsInStalls([a, b], 100, stalls)).toEqual({ slow: 0, slowInStallPct: 0, allInStallPct: 50 });
    expect(slowRequestsInStalls([a, b], 10, [])).toEqual({ slow: 2, slowInStallPct: 0, allInStallPct: 0 });
  });
});
