// Status merging: lastTransitionTime kept while a condition's status holds, other controllers' entries kept.
import { describe, expect, it } from 'vitest';
import { mergeStatus, withTransitionTimes } from './writer.ts';

const c = (type: string, status: 'True' | 'False', reason = type) => ({
  type,
  status,
  reason,
  message: 'm',
  observedGeneration: 2,
});

describe('status merge', () => {
  it('keeps lastTransitionTime while the status is unchanged, sets now when it flips', () => {
    const existing = [
      { ...c('Accepted', 'True'), lastTransitionTime: '2024-01-01T00:00:00Z' },
      { ...c('Programmed', 'False'), lastTransitionTime: '2024-01-01T00:00:00Z' },
    ];
    const out = withTransitionTimes([c('Accepted', 'True'), c('Programmed', 'True')], existing, '2025-01-01T00:00:00Z');
    expect(out.map((x) => x.lastTransitionTime)).toEqual(['2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z']);
  });

  it("HTTPRoute: replaces our parents, keeps other controllers'; nothing to write for a route we never had", () => {
    const other = { parentRef: { name: 'x' }, controllerName: 'example.com/other', conditions: [] };
    const ours = {
      parentRef: { name: 'gw' },
      controllerName: 'gateway.gwvendor.dev/gwvendor',
      conditions: [c('Accepted', 'True')],
    };
    const merged = mergeStatus('httproutes', { parents: [ours] }, { parents: [other] }, 'now');
    expect(merged!.parents).toEqual([
      other,
      { ...ours, conditions: [{ ...c('Accepted', 'True'), lastTransitionTime: 'now' }] },
    ]);
    expect(mergeStatus('httproutes', { parents: [] }, { parents: [other] }, 'now')).toBeUndefined();
    expect(mergeStatus('httproutes', { parents: [] }, undefined, 'now')).toBeUndefined();
    // Detached from our Gateway: our entry goes away.
    expect(mergeStatus('httproutes', { parents: [] }, { parents: [other, ours] }, 'now')!.parents).toEqual([other]);
  });

  it("TrafficPolicy: our ancestors replace ours, others' stay, top-level conditions are ours", () => {
    const other = { ancestorRef: { name: 'y' }, controllerName: 'example.com/other', conditions: [] };
    const merged = mergeStatus(
      'trafficpolicies',
      { ancestors: [], conditions: [c('Accepted', 'True'), c('Attached', 'False', 'TargetNotFound')] },
      { ancestors: [other] },
      'now',
    );
    expect(merged!.ancestors).toEqual([other]);
    expect(merged!.conditions.map((x: any) => x.reason)).toEqual(['Accepted', 'TargetNotFound']);
  });

  it('BackendConfigPolicy: written as a TrafficPolicy (ancestors and top-level conditions), not dropped', () => {
    const ours = { ancestorRef: { name: 'gw' }, controllerName: 'gateway.gwvendor.dev/gwvendor', conditions: [] };
    const merged = mergeStatus(
      'backendconfigpolicies',
      { ancestors: [ours], conditions: [c('Accepted', 'True'), c('Attached', 'True')] },
      undefined,
      'now',
    );
    expect(merged!.ancestors).toEqual([ours]);
    expect(merged!.conditions.map((x: any) => x.type)).toEqual(['Accepted', 'Attached']);
  });

  it('ListenerPolicy: merged as a TrafficPolicy (our ancestors, top-level conditions)', () => {
    const ours = { ancestorRef: { name: 'gw' }, controllerName: 'gateway.gwvendor.dev/gwvendor', conditions: [] };
    const merged = mergeStatus(
      'listenerpolicies',
      { ancestors: [ours], conditions: [c('Accepted', 'True'), c('Attached', 'True')] },
      {},
      'now',
    );
    expect(merged!.ancestors).toEqual([ours]);
    expect(merged!.conditions.map((x: any) => x.type)).toEqual(['Accepted', 'Attached']);
  });

  it('Gateway: attachedListenerSets written while ListenerSets name it, removed once none does', () => {
    const desired = { addresses: [], conditions: [c('Accepted', 'True')], listeners: [] };
    const set = mergeStatus('gateways', { ...desired, attachedListenerSets: 2 }, { conditions: [] }, 'now');
    expect(set!.attachedListenerSets).toBe(2);
    const gone = mergeStatus('gateways', desired, { ...set, attachedListenerSets: 2 }, 'now');
    expect(gone).not.toHaveProperty('attachedListenerSets');
  });
});
