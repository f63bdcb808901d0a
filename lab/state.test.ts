import { describe, expect, it } from 'vitest';
import { addressPlan, claimLabIndex, labPaths, MAX_LABS, podLoopback, readLabRecord, writeLabRecord } from './state.ts';
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
    const octets = [a, b].flatMap((p) => [p.podOctet, p.serviceOctet, p.lbOctet, p.loopOctet]);
    expect(new Set(octets).size).toBe(8);
    const last = addressPlan(MAX_LABS - 1);
    expect(last.loopOctet).toBeLessThan(addressPlan(0).podOctet);
    expect(octets.concat(last.loopOctet)).not.toContain(0); // 127.0.0.0/16 stays the host's own loopback
  });

  it("derives each pod's loopback from its pod IP", () => {
    const plan = addressPlan(3);
    expect(podLoopback(plan, '127.67.1.20')).toBe('127.7.1.20');
    expect(() => podLoopback(plan, '127.131.0.5')).toThrow(/not a pod IP of lab 3/);
  });

  it('claims an index machine-wide and releases it', async () => {
    // Other labs may run meanwhile (the scenario suite runs several beside the unit tests): start from an index
    // that is free now, the highest one, which nothing claims before the lower ones are taken.
    let first: Awaited<ReturnType<typeof claimLabIndex>> | undefined;
    for (let i = MAX_LABS - 1; i >= 0 && !first; i--) {
      const c = await claimLabIndex(i);
      if (c.index === i) first = c;
      else await c.release();
    }
    const free = first!.index;
    const second = await claimLabIndex(free);
    expect(second.index).not.toBe(free);
    await first!.release();
    const third = await claimLabIndex(free);
    expect(third.index).toBe(free);
    await second.release();
    await third.release();
  });

  it('round-trips the lab record', () => {
    const home = tempDir('gwlab-state-');
    writeLabRecord({ name: 'demo', index: 3, backend: 'embedded', kubeconfig: '/k' }, home);
    expect(readLabRecord('demo', home)?.index).toBe(3);
  });
});
