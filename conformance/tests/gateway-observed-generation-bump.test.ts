// Upstream conformance test GatewayObservedGenerationBump (Gateway API v1.6.1
// conformance/tests/gateway-observed-generation-bump.go), with its manifest and expectations.
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GW, mergePatch, mustHaveLatestConditions, namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayObservedGenerationBump',
  description:
    'A Gateway in the gateway-conformance-infra namespace should update the observedGeneration in all of its Status.Conditions after an update to the spec',
  features: ['Gateway'],
  manifests: ['tests/gateway-observed-generation-bump.yaml'],
  test(s) {
    it('observedGeneration should increment', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-observed-generation-bump' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [INFRA_NS]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const original = (await s.kube.get(GW, 'Gateway', gwNN.name, gwNN.namespace))!;
      await mergePatch(s.kube, original, {
        spec: {
          listeners: [
            ...original.spec.listeners,
            {
              name: 'alternate',
              hostname: 'foo.com',
              port: 80,
              protocol: 'HTTP',
              allowedRoutes: { namespaces: { from: 'All' } },
            },
          ],
        },
      });
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [INFRA_NS]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const updated = await s.kube.get(GW, 'Gateway', gwNN.name, gwNN.namespace);
      expect(updated?.metadata?.generation, 'generation should change after an update').not.toBe(
        original.metadata?.generation,
      );
    });
  },
});
