// lab:up never downgrades a cluster's Gateway API (issue 18), end to end on the existing backend against a bare
// embedded cluster, as a user meets it: the user installed Gateway API v1.3.0 with `kubectl apply --server-side`
// (tests/upstream/gateway-api-v1.3.0/standard-install.yaml: built from upstream's tag as the release assets are, by
// scripts/vendor-gateway-api.ts buildBundle, and kept as test data so that no run needs the network); lab:up stops
// before changing anything, exits 1 and prints the command that upgrades them. The user runs it (the vendored v1.6.1
// bundle, the path lab:up names); lab:up then installs the system and leaves every Gateway API CRD byte-identical
// (resourceVersion and managedFields included), saying it kept them. And on a cluster without any,
// `--gateway-api-channel experimental` installs the vendored experimental bundle (x-k8s.io kinds included).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatewayApiBundle } from '../lab/install.ts';
import { MINIMUM_BUNDLE_VERSION } from '../system/manifests/gateway-api.ts';
import { type BareCluster, ROOT, useBareCluster } from './support/bare-cluster.ts';

const RELEASE = 'https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml';

/** The cluster's CRDs of `group` (a prefix) as kubectl prints them, managedFields included. */
async function crdsOf(bare: BareCluster, group: string): Promise<any[]> {
  const r = await bare.kubectl(['get', 'crd', '-o', 'json', '--show-managed-fields']);
  expect(r.code, r.out).toBe(0);
  return (JSON.parse(r.stdout).items as any[]).filter((c) => c.spec.group.startsWith(group));
}

/** Whether the cluster serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (its discovery says so). */
async function servesAdmissionPolicies(bare: BareCluster): Promise<boolean> {
  const r = await bare.kubectl(['api-resources', '--api-group=admissionregistration.k8s.io', '-o', 'name']);
  return r.stdout.includes('validatingadmissionpolicies');
}

describe("lab:up keeps a cluster's Gateway API CRDs, and stops on old ones", () => {
  const bare = useBareCluster('gwlab-crds-');
  const gatewayApiCrds = () => crdsOf(bare, 'gateway.networking.k8s.io');

  it('v1.3.0 installed by the user: lab:up exits 1 before changing anything, with the upgrade command', async () => {
    const old = join(ROOT, 'tests/upstream/gateway-api-v1.3.0/standard-install.yaml');
    const applied = await bare.kubectl(['apply', '--server-side', '-f', old]);
    expect(applied.code, applied.out).toBe(0);
    const before = await gatewayApiCrds();
    expect(before.map((c) => c.metadata.annotations['gateway.networking.k8s.io/bundle-version'])).toEqual(
      Array(5).fill('v1.3.0'),
    );

    const r = await bare.labUpExisting();
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain('✗ Gateway API CRDs on the cluster');
    expect(r.out).toContain(
      `the cluster's Gateway API CRDs are v1.3.0 (standard channel): the control plane needs ${MINIMUM_BUNDLE_VERSION} or later; `,
    );
    expect(r.out).toContain('ReferenceGrant is not served at v1 (served: v1beta1), which the control plane reads');
    expect(r.out).toContain('Nothing was changed');
    expect(r.out).toContain(`upgrade them, then run lab:up again: kubectl apply --server-side -f ${RELEASE}`);
    expect(r.out).toContain('kubectl apply --server-side -f system/manifests/gateway-api/standard-install.yaml');
    // Nothing changed: the CRDs as they were, and none of the system installed.
    expect(await gatewayApiCrds()).toEqual(before);
    const ns = await bare.kubectl(['get', 'namespace', 'gwvendor-system']);
    expect(ns.code).not.toBe(0);
    expect((await bare.kubectl(['get', 'crd', 'trafficpolicies.gateway.gwvendor.dev'])).code).not.toBe(0);
  }, 150_000);

  it('upgraded by the user to v1.6.1: lab:up installs the system and leaves every Gateway API CRD byte-identical', async () => {
    // The alternative lab:up printed: the vendored copy of the release bundle.
    const applied = await bare.kubectl([
      'apply',
      '--server-side',
      '-f',
      join(ROOT, 'system/manifests/gateway-api/standard-install.yaml'),
    ]);
    // The whole bundle, its safe-upgrade ValidatingAdmissionPolicy and Binding included, as on a real cluster.
    expect(applied.code, applied.out).toBe(0);
    expect(applied.out.match(/customresourcedefinition\.apiextensions\.k8s\.io\/\S+ serverside-applied/g)).toHaveLength(
      10,
    );
    expect(applied.out).toContain(
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/safe-upgrades.gateway.networking.k8s.io serverside-applied',
    );
    const before = await gatewayApiCrds();
    expect(before).toHaveLength(10);
    for (const c of before)
      expect(c.metadata.annotations['gateway.networking.k8s.io/bundle-version'], c.metadata.name).toBe('v1.6.1');

    const r = await bare.labUpExisting();
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(
      `the cluster has Gateway API v1.6.1 (standard channel), at least the ${MINIMUM_BUNDLE_VERSION} the control plane needs: keeping them as they are`,
    );
    expect(r.out).toContain('Lab ext is up (existing)');
    expect(await gatewayApiCrds()).toEqual(before);
    const gc = await bare.kubectl(['get', 'gatewayclass', 'gwvendor', '-o', 'jsonpath={.spec.controllerName}']);
    expect(gc.out.trim()).toBe('gateway.gwvendor.dev/gwvendor');
  }, 150_000);

  it("lab:down of the existing lab leaves the user's Gateway API CRDs as they were", async () => {
    const before = await gatewayApiCrds();
    const r = await bare.script(['scripts/lab-down.ts', '--name', 'ext'], 90_000);
    expect(r.code, r.out).toBe(0);
    expect(await gatewayApiCrds()).toEqual(before);
  }, 100_000);
});

describe('lab:up --gateway-api-channel experimental on a cluster without Gateway API CRDs', () => {
  const bare = useBareCluster('gwlab-crds-exp-');

  it('installs the vendored experimental bundle verbatim, its admission policy and binding included', async () => {
    const r = await bare.labUpExisting(['--gateway-api-channel', 'experimental']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('none installed: installing the vendored v1.6.1 experimental bundle');
    expect(r.out).toContain('✓ Gateway API v1.6.1 CRDs (experimental channel)');
    expect(await servesAdmissionPolicies(bare)).toBe(true);
    expect(r.out).not.toContain('skipping');
    const vap = await bare.kubectl([
      'get',
      'validatingadmissionpolicybinding',
      'safe-upgrades.gateway.networking.k8s.io',
    ]);
    expect(vap.code, vap.out).toBe(0);
    const stored = await crdsOf(bare, 'gateway.networking.');
    const bundle = gatewayApiBundle('experimental').filter((d) => d.kind === 'CustomResourceDefinition');
    expect(stored.map((c) => c.metadata.name).sort()).toEqual(bundle.map((d) => d.metadata!.name).sort());
    for (const doc of bundle) {
      const crd = stored.find((c) => c.metadata.name === doc.metadata!.name);
      expect(crd.spec, doc.metadata!.name).toMatchObject(doc.spec);
      expect(crd.metadata.annotations['gateway.networking.k8s.io/channel'], doc.metadata!.name).toBe('experimental');
    }
  }, 150_000);
});
