// Upstream conformance test ListenerSetAllowedRoutesSupportedKinds (Gateway API v1.6.1
// conformance/tests/listenerset-allowed-routes-supported-kinds.go), with its manifest and expectations. It names
// TLSRoute, so it is skipped until TLSRoute is declared (utils/features.ts).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveCondition,
  listenerSetListenersMustHaveConditions,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'ListenerSetAllowedRoutesSupportedKinds',
  description: 'ListenerSet listeners allow specific route kinds',
  features: ['Gateway', 'ListenerSet', 'TLSRoute'],
  manifests: ['tests/listenerset-allowed-routes-supported-kinds.yaml'],
  test(s) {
    it('a listener admitting no route kind of its protocol has ResolvedRefs False (InvalidRouteKinds)', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-with-listener-sets-test-supported-route-kinds' };
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await listenerSetListenersMustHaveConditions(
        s.kube,
        s.timeoutConfig,
        { namespace: ns, name: 'listenerset-test-allowed-routes-supported-kinds' },
        [{ type: 'ResolvedRefs', status: 'False', reason: 'InvalidRouteKinds' }],
        ['listener-set-listener-allowed-routes-tls-only'],
      );
    });
  },
});
