// The benchmarks' shared statistics: each percentile rule gives the figures its benches have always reported (the
// index rules are written out in stats.ts), and the median, slope and quantiles behave at their edges.
import { describe, expect, it } from 'vitest';
import { mean, median, nearestRank, percentile, percentileOfSorted, quantiles, round2, slope } from './stats.ts';

const ten = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];

describe('percentile rules', () => {
  it('percentile() takes index ⌊p·n⌋ of the sorted values, as bench:proxy, apiserver and controlplane report', () => {
    expect(percentile(ten, 50)).toBe(6);
    expect(percentile(ten, 99)).toBe(10);
    expect(percentile(ten, 0)).toBe(1);
    expect(percentile([4, 1, 3, 2], 50)).toBe(3);
    expect(percentileOfSorted(Float64Array.from([1, 2, 3]), 100)).toBe(3);
  });

  it('nearestRank() takes index ⌈p·n⌉ − 1, as bench:lab, tools and pods report', () => {
    expect(nearestRank(ten, 50)).toBe(5);
    expect(nearestRank(ten, 99)).toBe(10);
    expect(nearestRank(ten, 10)).toBe(1);
    expect(nearestRank([7], 50)).toBe(7);
  });

  it('neither sorts its input in place', () => {
    const xs = [3, 1, 2];
    percentile(xs, 50);
    nearestRank(xs, 50);
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe('median, mean, slope', () => {
  it('median() averages the two middle values of an even count and is NaN for none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('mean() is 0 for none', () => {
    expect(mean([1, 2, 6])).toBe(3);
    expect(mean([])).toBe(0);
  });

  it('slope() is the least-squares slope, 0 without two points or without spread in x', () => {
    expect(slope([0, 1, 2, 3], [1, 3, 5, 7])).toBe(2);
    expect(round2(slope([0, 1, 2], [0, 1, 0]))).toBe(0);
    expect(slope([1], [5])).toBe(0);
    expect(slope([2, 2], [1, 9])).toBe(0);
  });
});

describe('quantiles', () => {
  it('gives p50, p90, p99, p99.9 and max rounded to 3 decimals', () => {
    const xs = Float64Array.from({ length: 1000 }, (_, i) => (1000 - i) / 3);
    expect(quantiles(xs)).toEqual({ p50: 167, p90: 300.333, p99: 330.333, p999: 333.333, max: 333.333 });
  });

  it('is NaN everywhere for no values', () => {
    expect(Object.values(quantiles(new Float64Array(0))).every(Number.isNaN)).toBe(true);
  });
});
