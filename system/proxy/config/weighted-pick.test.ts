// pickWeighted: the proxy's one weighted choice (router weighted_clusters, tcp_proxy weighted_clusters).
import { describe, expect, it } from 'vitest';
import { pickWeighted } from './weighted-pick.ts';

describe('pickWeighted', () => {
  it('never picks a zero weight and follows the weights (70/30 over 5,000 picks, 5 % tolerance)', () => {
    const items = [
      { name: 'a', weight: 70 },
      { name: 'z', weight: 0 },
      { name: 'b', weight: 30 },
    ];
    const n: Record<string, number> = { a: 0, b: 0, z: 0 };
    for (let i = 0; i < 5000; i++) n[pickWeighted(items).name]++;
    expect(n.z).toBe(0);
    expect(Math.abs(n.a / 5000 - 0.7)).toBeLessThan(0.05);
  });

  it('one entry is always the pick; a declared total is used as given', () => {
    expect(pickWeighted([{ weight: 0, name: 'only' }]).name).toBe('only');
    const items = [
      { name: 'a', weight: 1 },
      { name: 'b', weight: 1 },
    ];
    for (let i = 0; i < 100; i++) expect(pickWeighted(items, 1).name).toBe('a');
  });
});
