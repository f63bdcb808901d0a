// The lab the scenarios run on: the control plane is rolled out and its GatewayClass is Accepted, and its Gateway API
// CRDs are upstream's v1.6.1 bundle as users install it (issue 18), of the channel the lab has (the scenario labs
// install the experimental one: support/global-setup.ts; lab:up's default is the standard one): every document of the
// vendored bundle stored with all its fields and no annotation of ours.
import { describe, expect, it } from 'vitest';
import { gatewayApiBundle } from '../lab/install.ts';
import { useLab } from './support/lab.ts';

describe('lab', () => {
  const lab = useLab();

  it('has the control plane Ready and GatewayClass gwvendor Accepted', async () => {
    await lab.kube.waitForRollout('gwvendor', 'gwvendor-system');
    const gc = await lab.kube.waitForCondition(
      'gateway.networking.k8s.io/v1',
      'GatewayClass',
      'gwvendor',
      undefined,
      'Accepted',
    );
    expect(gc.spec.controllerName).toBe('gateway.gwvendor.dev/gwvendor');
    const pods = await lab.k(['get', 'pods', '-n', 'gwvendor-system', '-o', 'name']);
    expect(pods).toMatch(/^pod\/gwvendor-/m);
  });

  it('has the Gateway API CRDs of the vendored v1.6.1 bundle of its channel, verbatim', async () => {
    const stored = JSON.parse(await lab.k(['get', 'crd', '-o', 'json'])).items as any[];
    // The scenario labs install the experimental channel; a lab a user brings (scenario 92: lab:up's default) has
    // the standard one. Either way the bundle of the channel the CRDs name, verbatim.
    const httproutes = stored.find((c) => c.metadata.name === 'httproutes.gateway.networking.k8s.io');
    const channel = httproutes?.metadata?.annotations?.['gateway.networking.k8s.io/channel'];
    expect(['standard', 'experimental']).toContain(channel);
    const bundle = gatewayApiBundle(channel).filter((d) => d.kind === 'CustomResourceDefinition');
    // gateway.networking.k8s.io and, on the experimental channel, gateway.networking.x-k8s.io.
    const groups = new Set(bundle.map((d) => (d.spec as { group: string }).group));
    const ours = stored.filter((c) => groups.has(c.spec.group));
    expect(ours.map((c) => c.metadata.name).sort()).toEqual(bundle.map((d) => d.metadata!.name).sort());
    for (const doc of bundle) {
      const crd = ours.find((c) => c.metadata.name === doc.metadata!.name);
      expect(crd.spec, doc.metadata!.name).toMatchObject(doc.spec);
      expect(crd.metadata.annotations, doc.metadata!.name).toEqual(doc.metadata!.annotations);
    }
  });
});
