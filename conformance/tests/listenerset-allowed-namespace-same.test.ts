// Upstream conformance test ListenerSetAllowedNamespaceSame (Gateway API v1.6.1
// conformance/tests/listenerset-allowed-namespace-same.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  acceptedListenerConditions,
  gatewayMustHaveAttachedListeners,
  gatewayMustHaveCondition,
  listenerSetListenersMustHaveConditions,
  listenerSetMustHaveCondition,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'ListenerSetAllowedNamespaceSame',
  description: 'ListenerSets in the same namespace as the Gateway are allowed when `allowedListeners` is set to `Same`',
  features: ['Gateway', 'ListenerSet'],
  manifests: ['tests/listenerset-allowed-namespace-same.yaml'],
  test(s) {
    it('one ListenerSet is attached, the other refused (NotAllowed)', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-allows-listenerset-in-same-namespace' };
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 1);
      const lsNN = { namespace: ns, name: 'listenerset-in-same-namespace' };
      await listenerSetMustHaveCondition(s.kube, s.timeoutConfig, lsNN, {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
      });
      await listenerSetMustHaveCondition(s.kube, s.timeoutConfig, lsNN, {
        type: 'Programmed',
        status: 'True',
        reason: 'Programmed',
      });
      await listenerSetListenersMustHaveConditions(s.kube, s.timeoutConfig, lsNN, acceptedListenerConditions(), [
        'listenerset-in-same-namespace-listener',
      ]);
      const disallowedNN = {
        namespace: 'gateway-api-listenerset-not-allowed-ns',
        name: 'listenerset-in-different-namespace',
      };
      for (const type of ['Accepted', 'Programmed'])
        await listenerSetMustHaveCondition(s.kube, s.timeoutConfig, disallowedNN, {
          type,
          status: 'False',
          reason: 'NotAllowed',
        });
    });
  },
});
