// Upstream conformance test GatewayModifyListeners (Gateway API v1.6.1 conformance/tests/gateway-modify-listeners.go),
// with its manifest and expectations.
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  type Cond,
  GROUP,
  GW,
  gatewayStatusMustHaveListeners,
  mergePatch,
  mustHaveLatestConditions,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const kinds = [{ group: GROUP, kind: 'HTTPRoute' }];
const acceptedResolved: Cond[] = [
  { type: 'Accepted', status: 'True' },
  { type: 'ResolvedRefs', status: 'True' },
];

runConformanceTest({
  shortName: 'GatewayModifyListeners',
  description: 'A Gateway in the gateway-conformance-infra namespace should handle adding and removing listeners.',
  features: ['Gateway'],
  manifests: ['tests/gateway-modify-listeners.yaml'],
  test(s) {
    it('should be able to add a listener that then becomes available for routing traffic', async () => {
      const gwNN = { namespace: ns, name: 'gateway-add-listener' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const original = (await s.kube.get(GW, 'Gateway', gwNN.name, ns))!;
      await mergePatch(s.kube, original, {
        spec: {
          listeners: [
            ...original.spec.listeners,
            {
              name: 'http',
              port: 80,
              protocol: 'HTTP',
              hostname: 'data.test.com',
              allowedRoutes: { namespaces: { from: 'All' } },
            },
          ],
        },
      });
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        { name: 'https', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 1 },
        { name: 'http', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 1 },
      ]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const updated = await s.kube.get(GW, 'Gateway', gwNN.name, ns);
      expect(updated?.metadata?.generation, 'generation should change after an update').not.toBe(
        original.metadata?.generation,
      );
    });
    it('should be able to remove listeners, which would then stop routing the relevant traffic', async () => {
      const gwNN = { namespace: ns, name: 'gateway-remove-listener' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const original = (await s.kube.get(GW, 'Gateway', gwNN.name, ns))!;
      expect(original.spec.listeners, 'the gateway must have 2 listeners').toHaveLength(2);
      await mergePatch(s.kube, original, {
        spec: { listeners: original.spec.listeners.filter((l: { name: string }) => l.name === 'http') },
      });
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        { name: 'http', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 1 },
      ]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const updated = await s.kube.get(GW, 'Gateway', gwNN.name, ns);
      expect(updated?.metadata?.generation, 'generation should change after an update').not.toBe(
        original.metadata?.generation,
      );
    });
  },
});
