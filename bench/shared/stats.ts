// Summary statistics every benchmark under bench/ uses: percentiles, medians, means, a least-squares slope and the
// rounding of figures for the reports. Each bench keeps the percentile rule it has always reported with, so figures
// stay comparable with earlier runs of the same bench:
//   - percentile() (index ⌊p·n⌋ of the sorted values): bench:proxy, bench:apiserver, bench:controlplane, relay;
//   - nearestRank() (index ⌈p·n⌉ − 1, the nearest-rank definition): bench:lab, bench:tools, bench:pods.

/** `n` rounded to 1, 2 or 3 decimals (how the reports print figures). */
export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;
export const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** The value at index ⌊p/100 · n⌋ (capped at the last) of values already sorted in ascending order. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** percentileOfSorted() of a sorted copy of `values` (undefined for none). */
export function percentile(values: readonly number[], p: number): number {
  return percentileOfSorted(
    [...values].sort((x, y) => x - y),
    p,
  );
}

/** The nearest-rank percentile: the value at index ⌈p/100 · n⌉ − 1 of the sorted values (undefined for none). */
export function nearestRank(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** The median, the mean of the two middle values for an even count; NaN for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The arithmetic mean; 0 for none. */
export const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Least-squares slope of y over x (0 with fewer than two points or no spread in x). */
export function slope(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  if (n < 2) return 0;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (x[i]! - mx) * (y[i]! - my);
    den += (x[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** A latency distribution as the reports give it, in ms rounded to 3 decimals. */
export interface Quantiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** p50, p90, p99, p99.9 and max of `values` (percentileOfSorted's rule); NaN everywhere for none. */
export function quantiles(values: Float64Array): Quantiles {
  const s = values.slice().sort();
  if (s.length === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, p999: Number.NaN, max: Number.NaN };
  return {
    p50: round3(percentileOfSorted(s, 50)),
    p90: round3(percentileOfSorted(s, 90)),
    p99: round3(percentileOfSorted(s, 99)),
    p999: round3(percentileOfSorted(s, 99.9)),
    max: round3(s[s.length - 1]!),
  };
}
