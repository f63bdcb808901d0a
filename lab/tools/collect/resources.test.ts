// The resources collector (lab:bundle, failure artifacts) reads every kind the control plane reads of the gateway's own
// API groups (kube/watched.ts: a new vendor kind cannot be left out of a bug report), with its status: a
// BackendConfigPolicy lands in resources/<namespace>/BackendConfigPolicy.yaml as kubectl get -o yaml shows it.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { WATCHED } from '../../../system/controlplane/kube/watched.ts';
import type { KObj } from '../../toolkit/kube.ts';
import type { Inventory, KindRef } from './inventory.ts';
import type { Output } from './output.ts';
import { GATEWAY_KINDS, resourcesCollector } from './resources.ts';
import type { CollectContext } from './types.ts';

describe('resources collector', () => {
  it('collects BackendConfigPolicies (gateway.gwvendor.dev/v1alpha1) with their statuses', async () => {
    expect(GATEWAY_KINDS.find((k) => k.kind === 'BackendConfigPolicy')).toEqual({
      kind: 'BackendConfigPolicy',
      plural: 'backendconfigpolicies',
      apiVersions: ['gateway.gwvendor.dev/v1alpha1'],
      namespaced: true,
    });
    const bcp: KObj = {
      apiVersion: 'gateway.gwvendor.dev/v1alpha1',
      kind: 'BackendConfigPolicy',
      metadata: { name: 'hc', namespace: 'team', managedFields: [{ manager: 'kubectl' }] } as KObj['metadata'],
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }] },
      status: { ancestors: [{ conditions: [{ type: 'Accepted', status: 'True' }] }] },
    };
    const inventory = {
      list: async (ref: KindRef) =>
        ref.kind === 'BackendConfigPolicy' ? { apiVersion: ref.apiVersions[0], items: [bcp] } : undefined,
    } as unknown as Inventory;
    const files = new Map<string, string>();
    const out = { write: async (path: string, text: string) => void files.set(path, text) } as unknown as Output;
    await resourcesCollector.run({ inventory } as unknown as CollectContext, out);
    const written = parse(files.get('resources/team/BackendConfigPolicy.yaml')!);
    expect(written.status.ancestors[0].conditions[0].type).toBe('Accepted');
    expect(written.metadata.managedFields).toBeUndefined();
  });

  it('collects every watched kind of gateway.networking.k8s.io and gateway.gwvendor.dev', () => {
    const collected = new Set(GATEWAY_KINDS.map((k) => k.kind));
    const watched = WATCHED.filter((w) => /^gateway\.(networking\.k8s\.io|gwvendor\.dev)\//.test(w.apiVersion)).map(
      (w) => w.kind,
    );
    expect(watched).toContain('ListenerPolicy');
    expect(watched.filter((k) => !collected.has(k))).toEqual([]);
  });
});
