// Upstream conformance test TLSRouteListenerTerminateSupportedKinds (Gateway API v1.6.1 conformance/tests/
// tlsroute-listener-terminate-supported-kinds.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TLSRouteListenerTerminateSupportedKinds',
  description:
    'A Gateway Listener with TLS mode Terminate MUST include TLSRoute in SupportedKinds when termination is supported',
  features: ['Gateway', 'TLSRoute', 'TLSRouteModeTerminate'],
  manifests: ['tests/tlsroute-listener-terminate-supported-kinds.yaml'],
  test(s) {
    it('Listener with mode Terminate must have TLSRoute in SupportedKinds', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-tlsroute-terminate-supported' },
        [
          {
            name: 'tls-terminate',
            supportedKinds: [{ group: GROUP, kind: 'TLSRoute' }],
            conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
            attachedRoutes: 0,
          },
        ],
      ));
  },
});
