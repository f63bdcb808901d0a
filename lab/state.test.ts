import { describe, expect, it } from 'vitest';
import { addressPlan, claimLabIndex, labPaths, readLabRecord, writeLabRecord } from './state.ts';
import { tempDir } from './testing/tmp.ts';

describe('lab state', () => {
  it('lays out the state folder under GWLAB_HOME', () => {
    const p = labPaths('demo', '/x');
    expect(p.kubeconfig).toBe('/x/demo/kubeconfig');
    expect(p.pods).toBe('/x/demo/pods');
    expect(() => labPaths('Bad_Name', '/x')).toThrow(/invalid lab name/);
  });

  it('gives labs disjoint address ranges', () => {
    const a = addressPlan(0);
    const b = addressPlan(1);
    expect(new Set([a.podOctet, a.serviceOctet, a.lbOctet, b.podOctet, b.serviceOctet, b.lbOctet]).size).toBe(6);
  });

  it('claims an index machine-wide and releases it', async () => {
    const first = await claimLabIndex(7);
    expect(first.index).toBe(7);
    const second = await claimLabIndex(7);
    expect(second.index).not.toBe(7);
    await first.release();
    const third = await claimLabIndex(7);
    expect(third.index).toBe(7);
    await second.release();
    await third.release();
  });

  it('round-trips the lab record', () => {
    const home = tempDir('gwlab-state-');
    writeLabRecord({ name: 'demo', index: 3, backend: 'embedded', kubeconfig: '/k' }, home);
    expect(readLabRecord('demo', home)?.index).toBe(3);
  });
});
