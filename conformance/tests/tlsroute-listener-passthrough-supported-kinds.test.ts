// Upstream conformance test TLSRouteListenerPassthroughSupportedKinds (Gateway API v1.6.1 conformance/tests/
// tlsroute-listener-passthrough-supported-kinds.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TLSRouteListenerPassthroughSupportedKinds',
  description: 'A Gateway Listener with TLS mode Passthrough MUST include TLSRoute in SupportedKinds',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-listener-passthrough-supported-kinds.yaml'],
  test(s) {
    it('TLS listener should have a false ResolvedRefs condition with reason InvalidRouteKinds for TCPRoute, and TLSRoute must be put in the supportedKinds', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-tlsroute-passthrough-supported-kind' },
        [
          {
            name: 'tls-passthrough',
            supportedKinds: [{ group: GROUP, kind: 'TLSRoute' }],
            conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'InvalidRouteKinds' }],
            attachedRoutes: 0,
          },
        ],
      ));
  },
});
