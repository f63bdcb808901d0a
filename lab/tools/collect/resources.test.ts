// lab:bundle and the failure artifacts collect every kind the control plane reads of the gateway's own API groups
// (kube/watched.ts): a new vendor kind (ListenerPolicy) cannot be left out of a bug report.
import { describe, expect, it } from 'vitest';
import { WATCHED } from '../../../system/controlplane/kube/watched.ts';
import { GATEWAY_KINDS } from './resources.ts';

describe('resources collector', () => {
  it('collects every watched kind of gateway.networking.k8s.io and gateway.gwvendor.dev', () => {
    const collected = new Set(GATEWAY_KINDS.map((k) => k.kind));
    const watched = WATCHED.filter((w) => /^gateway\.(networking\.k8s\.io|gwvendor\.dev)\//.test(w.apiVersion)).map(
      (w) => w.kind,
    );
    expect(watched).toContain('ListenerPolicy');
    expect(watched.filter((k) => !collected.has(k))).toEqual([]);
  });
});
