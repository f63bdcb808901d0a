// The install step (install.ts), against a stand-in for the cluster that holds every CRD apply until the test lets it
// finish. Its order: the control plane's objects do not wait for the CRDs (its pod starts while they are applied), its
// ServiceAccount and RBAC come before its Deployment, the GatewayClass (a custom resource) only after the Gateway API
// CRDs, and the Ready wait after everything. The Gateway API bundle goes in verbatim by server-side apply without
// forced conflicts (as `kubectl apply --server-side -f standard-install.yaml`), its admission policy and binding only
// where the cluster serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy; a cluster's own Gateway API CRDs
// are kept, and too old ones stop the install before anything is applied; a cluster lab:up has just created is not
// asked for its CRDs. No timers: each check runs once the event loop has nothing left to do.
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MINIMUM_BUNDLE_VERSION } from '../system/manifests/gateway-api.ts';
import { gatewayApiBundle, type InstallOptions, installSystem } from './install.ts';
import { Progress, StepFailed } from './progress.ts';
import { PROJECT_CRD_COUNT } from './testing/crds.ts';
import type { KObj, Kube } from './toolkit/kube.ts';

/** Records each document applied (`Kind/name`), holding CRDs until release(). */
class HeldCrds {
  readonly applied: string[] = [];
  readonly finished: string[] = [];
  /** Each document as applied, with the apply's options. */
  readonly docs: { doc: KObj; force?: boolean }[] = [];
  private readonly held: (() => void)[] = [];
  rolloutAfter?: string[];
  /** The cluster's own CRDs, by name. */
  readonly crds = new Map<string, KObj>();
  /** The CRDs read (getCrd), by name. */
  readonly crdsRead: string[] = [];
  servesAdmissionPolicies = false;

  async apply(input: KObj | KObj[], opts: { force?: boolean } = {}): Promise<KObj[]> {
    const docs = Array.isArray(input) ? input : [input];
    for (const d of docs) {
      const id = `${d.kind}/${d.metadata?.name}`;
      this.applied.push(id);
      this.docs.push({ doc: structuredClone(d), force: opts.force });
      if (d.kind === 'CustomResourceDefinition') await new Promise<void>((r) => this.held.push(r));
      this.finished.push(id);
    }
    return docs;
  }

  async getCrd(name: string): Promise<KObj | undefined> {
    this.crdsRead.push(name);
    return this.crds.get(name);
  }

  async serves(apiVersion: string, kind: string): Promise<boolean> {
    return this.servesAdmissionPolicies && apiVersion === 'admissionregistration.k8s.io/v1' && !!kind;
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

/** installSystem on the stand-in run to its end (every held CRD let through); the progress lines it printed. */
async function installAll(kube: HeldCrds, opts: Partial<InstallOptions> = {}): Promise<string[]> {
  const lines: string[] = [];
  const done = installSystem(kube as unknown as Kube, {
    progress: new Progress({ sink: { write: (l) => lines.push(l) } }),
    ...opts,
  });
  await settle();
  await kube.release();
  await done;
  return lines;
}

describe('installSystem', () => {
  it("applies the control plane's objects while the CRDs are still being applied; its GatewayClass after them", async () => {
    const kube = new HeldCrds();
    const done = installSystem(kube as unknown as Kube, { progress: new Progress({ quiet: true }) });
    await settle();
    // Every CRD is on its way at once, and the control plane is applied up to its Deployment meanwhile.
    const crds = kube.applied.filter((id) => id.startsWith('CustomResourceDefinition/'));
    expect(crds.length).toBe(PROJECT_CRD_COUNT); // the 10 of the v1.6.1 standard bundle and gwlab's own
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
    expect(gatewayApi.length).toBe(10);
    const gc = kube.applied.indexOf('GatewayClass/gwvendor');
    expect(gc).toBeGreaterThan(-1);
    for (const id of gatewayApi)
      expect(kube.finished.indexOf(id)).toBeLessThan(kube.finished.indexOf('GatewayClass/gwvendor'));
    expect(new Set(kube.rolloutAfter)).toEqual(new Set(kube.applied));
    // The lab's GatewayParameters (default access log) after gwlab's CRDs, named by the GatewayClass.
    const gwp = kube.applied.indexOf('GatewayParameters/gwvendor-lab');
    for (const id of kube.finished.filter((x) => x.endsWith('.gateway.gwvendor.dev')))
      expect(kube.finished.indexOf(id)).toBeLessThan(gwp);
    const applied = (id: string) => kube.docs.find((d) => `${d.doc.kind}/${d.doc.metadata?.name}` === id)!.doc;
    expect(applied('GatewayParameters/gwvendor-lab').spec).toEqual({ defaultAccessLog: { enabled: true } });
    expect(applied('GatewayClass/gwvendor').spec.parametersRef).toEqual({
      group: 'gateway.gwvendor.dev',
      kind: 'GatewayParameters',
      name: 'gwvendor-lab',
      namespace: 'gwvendor-system',
    });
  });

  it('applies the standard bundle verbatim, without forced conflicts; skips its admission documents, saying why', async () => {
    const kube = new HeldCrds();
    const lines = await installAll(kube);
    const bundle = gatewayApiBundle('standard');
    const crds = bundle.filter((d) => d.kind === 'CustomResourceDefinition');
    const applied = kube.docs.filter((a) => a.doc.metadata?.name?.endsWith('.gateway.networking.k8s.io'));
    expect(applied.map((a) => a.doc)).toEqual(crds);
    expect(applied.every((a) => a.force === false)).toBe(true);
    expect(lines).toContain('  none installed: installing the vendored v1.6.1 standard bundle');
    expect(lines).toContain(
      '  the cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy: skipping the ' +
        "bundle's ValidatingAdmissionPolicy safe-upgrades.gateway.networking.k8s.io and ValidatingAdmissionPolicyBinding safe-upgrades.gateway.networking.k8s.io",
    );
    expect(kube.applied.filter((id) => id.startsWith('ValidatingAdmission'))).toEqual([]);
  });

  it('applies the admission policy and binding too where the cluster serves them; the experimental bundle when asked', async () => {
    const kube = new HeldCrds();
    kube.servesAdmissionPolicies = true;
    await installAll(kube, { gatewayApiChannel: 'experimental' });
    const bundle = gatewayApiBundle('experimental');
    const fromBundle = kube.docs.filter(
      (a) => a.doc.metadata?.annotations?.['gateway.networking.k8s.io/bundle-version'],
    );
    expect(fromBundle.map((a) => a.doc)).toEqual(expect.arrayContaining(bundle));
    expect(fromBundle.length).toBe(15);
    expect(kube.applied).toContain('ValidatingAdmissionPolicy/safe-upgrades.gateway.networking.k8s.io');
    expect(kube.applied).toContain('ValidatingAdmissionPolicyBinding/safe-upgrades.gateway.networking.k8s.io');
    expect(kube.applied).toContain('CustomResourceDefinition/xmeshes.gateway.networking.x-k8s.io');
  });

  it("keeps a cluster's current Gateway API CRDs: applies none of them, says so", async () => {
    const kube = new HeldCrds();
    for (const c of gatewayApiBundle('standard').filter((d) => d.kind === 'CustomResourceDefinition'))
      kube.crds.set(c.metadata!.name!, c);
    const lines = await installAll(kube);
    expect(kube.applied.filter((id) => id.endsWith('.gateway.networking.k8s.io'))).toEqual([]);
    expect(kube.applied).toContain('GatewayClass/gwvendor');
    expect(lines).toContain(
      `  the cluster has Gateway API v1.6.1 (standard channel), at least the ${MINIMUM_BUNDLE_VERSION} the control plane needs: keeping them as they are`,
    );
  });

  it('reads the CRDs of a cluster it did not create; installs on a new one (lab:up made it empty) without asking', async () => {
    const existing = new HeldCrds();
    await installAll(existing);
    expect(existing.crdsRead).toContain('httproutes.gateway.networking.k8s.io');
    const created = new HeldCrds();
    const lines = await installAll(created, { newCluster: true });
    expect(created.crdsRead).toEqual([]);
    expect(lines).toContain('  none installed: installing the vendored v1.6.1 standard bundle (a new cluster)');
    expect(created.applied).toContain('CustomResourceDefinition/httproutes.gateway.networking.k8s.io');
  });

  it('stops before applying anything on a cluster whose Gateway API CRDs are too old, with the upgrade command', async () => {
    const kube = new HeldCrds();
    for (const c of gatewayApiBundle('standard').filter((d) => d.kind === 'CustomResourceDefinition')) {
      c.metadata!.annotations!['gateway.networking.k8s.io/bundle-version'] = 'v1.3.0';
      kube.crds.set(c.metadata!.name!, c);
    }
    const err = await installSystem(kube as unknown as Kube, { progress: new Progress({ quiet: true }) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StepFailed);
    expect((err as StepFailed).message).toContain(
      `v1.3.0 (standard channel): the control plane needs ${MINIMUM_BUNDLE_VERSION} or later`,
    );
    expect((err as StepFailed).hint).toContain(
      'kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml',
    );
    await settle();
    expect(kube.applied).toEqual([]);
  });
});
