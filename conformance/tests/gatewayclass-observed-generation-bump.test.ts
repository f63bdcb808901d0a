// Upstream conformance test GatewayClassObservedGenerationBump (Gateway API v1.6.1
// conformance/tests/gatewayclass-observed-generation-bump.go), with its manifest and expectations. Its GatewayClass
// names the suite's controller ({GATEWAY_CONTROLLER_NAME} is filled in as upstream's Applier does).
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GW, gwcMustHaveAcceptedCondition, mergePatch, mustHaveLatestConditions } from '../utils/kubernetes.ts';

runConformanceTest({
  shortName: 'GatewayClassObservedGenerationBump',
  description:
    "A GatewayClass should update the observedGeneration in all of it's Status.Conditions after an update to the spec",
  features: ['Gateway'],
  manifests: ['tests/gatewayclass-observed-generation-bump.yaml'],
  test(s) {
    it('observedGeneration should increment', async () => {
      const name = 'gatewayclass-observed-generation-bump';
      await gwcMustHaveAcceptedCondition(s.kube, s.timeoutConfig, name, '');
      const original = (await s.kube.get(GW, 'GatewayClass', name))!;
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'GatewayClass', name);
      await mergePatch(s.kube, original, { spec: { description: 'new' } });
      await gwcMustHaveAcceptedCondition(s.kube, s.timeoutConfig, name, '');
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'GatewayClass', name);
      const updated = await s.kube.get(GW, 'GatewayClass', name);
      expect(updated?.metadata?.generation, 'generation should change after an update').not.toBe(
        original.metadata?.generation,
      );
    });
  },
});
