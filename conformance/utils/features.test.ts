// The feature lists as upstream's pkg/features has them (v1.6.1): each profile's core list and its extended list name
// a feature once each (upstream's own TCP/UDP profiles name their route kind in both: a set each, not one set), and gwlab declares (SUPPORTED) only features some profile knows, so a typo or a list edited in the
// wrong place shows here rather than as a silently skipped test or a duplicated line in the ConformanceReport.
import { describe, expect, it } from 'vitest';
import { PROFILES, SUPPORTED } from './features.ts';

describe('conformance features', () => {
  it.each(Object.values(PROFILES).map((p) => [p.name, p] as const))('%s lists each feature once', (_name, p) => {
    for (const list of [p.core, p.extended]) expect(list.filter((f, i) => list.indexOf(f) !== i)).toEqual([]);
  });

  it('declares only features of a known profile', () => {
    const known = new Set(Object.values(PROFILES).flatMap((p) => [...p.core, ...p.extended]));
    expect([...SUPPORTED].filter((f) => !known.has(f))).toEqual([]);
  });
});
