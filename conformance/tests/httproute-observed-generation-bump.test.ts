// Upstream conformance test HTTPRouteObservedGenerationBump (Gateway API v1.6.1
// conformance/tests/httproute-observed-generation-bump.go), with its manifest and expectations.
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  GW,
  httpRouteMustHaveCondition,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  mergePatch,
  mustHaveLatestConditions,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteObservedGenerationBump',
  description:
    "A HTTPRoute in the gateway-conformance-infra namespace should update the observedGeneration in all of it's Status.Conditions after an update to the spec",
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-observed-generation-bump.yaml'],
  test(s) {
    it('observedGeneration should increment', async () => {
      const routeNN = { namespace: INFRA_NS, name: 'observed-generation-bump' };
      const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [INFRA_NS]);
      const original = (await s.kube.get(GW, 'HTTPRoute', routeNN.name, routeNN.namespace))!;
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'HTTPRoute', routeNN);
      const rules = structuredClone(original.spec.rules);
      rules[0].backendRefs[0].name = 'infra-backend-v2';
      await mergePatch(s.kube, original, { spec: { rules } });
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, { type: 'Accepted', status: 'True' });
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'HTTPRoute', routeNN);
      const updated = await s.kube.get(GW, 'HTTPRoute', routeNN.name, routeNN.namespace);
      expect(updated?.metadata?.generation, 'generation should change after an update').not.toBe(
        original.metadata?.generation,
      );
    });
  },
});
