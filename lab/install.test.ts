// The install step's order (install.ts), against a stand-in for the cluster that holds every CRD apply until the test
// lets it finish: the control plane's objects do not wait for the CRDs (its pod starts while they are applied), its
// ServiceAccount and RBAC come before its Deployment, the GatewayClass (a custom resource) only after the Gateway API
// CRDs, and the Ready wait after everything. No timers: each check runs once the event loop has nothing left to do.
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { installSystem } from './install.ts';
import { Progress } from './progress.ts';
import type { KObj, Kube } from './toolkit/kube.ts';

/** Records each document applied (`Kind/name`), holding CRDs until release(). */
class HeldCrds {
  readonly applied: string[] = [];
  readonly finished: string[] = [];
  private readonly held: (() => void)[] = [];
  rolloutAfter?: string[];

  async apply(input: KObj | KObj[]): Promise<KObj[]> {
    const docs = Array.isArray(input) ? input : [input];
    for (const d of docs) {
      const id = `${d.kind}/${d.metadata?.name}`;
      this.applied.push(id);
      if (d.kind === 'CustomResourceDefinition') await new Promise<void>((r) => this.held.push(r));
      this.finished.push(id);
    }
    return docs;
  }

  async get(): Promise<undefined> {
    return undefined; // no Gateway API CRDs of the cluster's own
  }

  async waitForRollout(): Promise<KObj> {
    this.rolloutAfter = [...this.finished];
    return {} as KObj;
  }

  /** Lets every held CRD apply finish, and those that start meanwhile. */
  async release(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      for (const r of this.held.splice(0)) r();
      await turn();
    }
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await turn();
}

describe('installSystem', () => {
  it("applies the control plane's objects while the CRDs are still being applied; its GatewayClass after them", async () => {
    const kube = new HeldCrds();
    const done = installSystem(kube as unknown as Kube, { progress: new Progress({ quiet: true }) });
    await settle();
    // Every CRD is on its way at once, and the control plane is applied up to its Deployment meanwhile.
    const crds = kube.applied.filter((id) => id.startsWith('CustomResourceDefinition/'));
    expect(crds.length).toBe(7);
    expect(kube.finished.filter((id) => id.startsWith('CustomResourceDefinition/'))).toEqual([]);
    const cp = kube.applied.filter((id) => !id.startsWith('CustomResourceDefinition/'));
    expect(cp).toEqual([
      'Namespace/gwvendor-system',
      expect.stringMatching(/^(ServiceAccount|ClusterRole|ClusterRoleBinding|Service)\/gwvendor$/),
      expect.stringMatching(/^(ServiceAccount|ClusterRole|ClusterRoleBinding|Service)\/gwvendor$/),
      expect.stringMatching(/^(ServiceAccount|ClusterRole|ClusterRoleBinding|Service)\/gwvendor$/),
      expect.stringMatching(/^(ServiceAccount|ClusterRole|ClusterRoleBinding|Service)\/gwvendor$/),
      'Deployment/gwvendor',
    ]);
    expect(kube.rolloutAfter).toBeUndefined();

    await kube.release();
    await done;
    // The GatewayClass went in once the Gateway API CRDs were there; the Ready wait came last.
    const gatewayApi = kube.finished.filter((id) => id.endsWith('.gateway.networking.k8s.io'));
    expect(gatewayApi.length).toBe(4);
    const gc = kube.applied.indexOf('GatewayClass/gwvendor');
    expect(gc).toBeGreaterThan(-1);
    for (const id of gatewayApi)
      expect(kube.finished.indexOf(id)).toBeLessThan(kube.finished.indexOf('GatewayClass/gwvendor'));
    expect(new Set(kube.rolloutAfter)).toEqual(new Set(kube.applied));
  });
});
