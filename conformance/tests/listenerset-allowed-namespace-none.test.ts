// Upstream conformance test ListenerSetAllowedNamespaceNone (Gateway API v1.6.1
// conformance/tests/listenerset-allowed-namespace-none.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveAttachedListeners,
  gatewayMustHaveCondition,
  listenerSetMustHaveCondition,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'ListenerSetAllowedNamespaceNone',
  description: 'Listener Sets are not allowed on the Gateway when `allowedListeners` is set to `None`',
  features: ['Gateway', 'ListenerSet'],
  manifests: ['tests/listenerset-allowed-namespace-none.yaml'],
  test(s) {
    it('the Gateway is accepted and its ListenerSet refused (NotAllowed)', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-does-not-allow-listenerset' };
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 0);
      const lsNN = { namespace: ns, name: 'listenerset-not-allowed' };
      for (const type of ['Accepted', 'Programmed'])
        await listenerSetMustHaveCondition(s.kube, s.timeoutConfig, lsNN, {
          type,
          status: 'False',
          reason: 'NotAllowed',
        });
    });
  },
});
