// Upstream conformance test TLSRouteListenerTerminateNotSupported (Gateway API v1.6.1 conformance/tests/
// tlsroute-listener-terminate-not-supported.go), with its manifest and expectations. As upstream, it checks nothing
// when the implementation supports TLSRouteModeTerminate (gwlab does: the listener is accepted and served).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { SUPPORTED } from '../utils/features.ts';
import { gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TLSRouteListenerTerminateNotSupported',
  description:
    'When TLSRoute termination is NOT supported, a Gateway Listener with TLS mode Terminate MUST have Accepted=False with Reason=UnsupportedValue',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-listener-terminate-not-supported.yaml'],
  test(s) {
    const terminate = SUPPORTED.has('TLSRouteModeTerminate');
    it.skipIf(terminate)(
      'Listener with unsupported mode Terminate must have Accepted=False with Reason=UnsupportedValue',
      () =>
        gatewayStatusMustHaveListeners(
          s.kube,
          s.timeoutConfig,
          { namespace: INFRA_NS, name: 'gateway-tlsroute-terminate-unsupported' },
          [
            {
              name: 'tls-terminate',
              supportedKinds: [],
              conditions: [{ type: 'Accepted', status: 'False', reason: 'UnsupportedValue' }],
              attachedRoutes: 0,
            },
          ],
        ),
    );
    it.runIf(terminate)('TLSRouteModeTerminate is supported: nothing to check (as upstream)', () => {});
  },
});
