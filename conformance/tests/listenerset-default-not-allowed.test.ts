// Upstream conformance test ListenerSetDefaultNotAllowed (Gateway API v1.6.1
// conformance/tests/listenerset-default-not-allowed.go), with its manifest and expectations.
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
  shortName: 'ListenerSetDefaultNotAllowed',
  description: 'Listener Sets are not allowed on the Gateway by default (i.e. when `allowedListeners` is not set)',
  features: ['Gateway', 'ListenerSet'],
  manifests: ['tests/listenerset-default-not-allowed.yaml'],
  test(s) {
    it('the Gateway is accepted and its ListenerSet refused (NotAllowed)', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-default-does-not-allow-listenerset' };
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 0);
      const lsNN = { namespace: ns, name: 'listenerset-default-not-allowed' };
      for (const type of ['Accepted', 'Programmed'])
        await listenerSetMustHaveCondition(s.kube, s.timeoutConfig, lsNN, {
          type,
          status: 'False',
          reason: 'NotAllowed',
        });
    });
  },
});
