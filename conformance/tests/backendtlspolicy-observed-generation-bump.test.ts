// Upstream conformance test BackendTLSPolicyObservedGenerationBump (Gateway API v1.6.1
// conformance/tests/backendtlspolicy-observed-generation-bump.go), with its manifest and expectations: after a spec
// change, every ancestor condition carries the new generation.
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  backendTLSPolicyMustHaveCondition,
  GW,
  mergePatch,
  mustHaveLatestConditions,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'BackendTLSPolicyObservedGenerationBump',
  description:
    'A BackendTLSPolicy in the gateway-conformance-infra namespace should update the observedGeneration in all of its Status.Conditions after an update to the spec',
  features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/backendtlspolicy-observed-generation-bump.yaml'],
  test(s) {
    it('observedGeneration should increment', async () => {
      const policyNN = { namespace: ns, name: 'observed-generation-bump' };
      const gwNN = { namespace: ns, name: 'same-namespace' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const original = (await s.kube.get(GW, 'BackendTLSPolicy', policyNN.name, ns))!;
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'BackendTLSPolicy', policyNN);
      await mergePatch(s.kube, original, { spec: { validation: { hostname: 'foo.example.com' } } });
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policyNN, gwNN, {
        type: 'Accepted',
        status: 'True',
      });
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'BackendTLSPolicy', policyNN);
      const updated = await s.kube.get(GW, 'BackendTLSPolicy', policyNN.name, ns);
      expect(updated?.metadata?.generation, 'generation should change after an update').not.toBe(
        original.metadata?.generation,
      );
    });
  },
});
