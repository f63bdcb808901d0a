// Upstream conformance test TLSRouteListenerMixedTerminationNotSupported (Gateway API v1.6.1 conformance/tests/
// tlsroute-listener-mixed-termination-not-supported.go), with its manifest and expectations: without
// TLSRouteModeMixed, Terminate and Passthrough listeners on one port are both Accepted=False/ProtocolConflict.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { SUPPORTED } from '../utils/features.ts';
import { gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

const conflict = [{ type: 'Accepted', status: 'False' as const, reason: 'ProtocolConflict' }];

runConformanceTest({
  shortName: 'TLSRouteListenerMixedTerminationNotSupported',
  description:
    'When TLSRoute mixed termination/passthrough listener is NOT supported, a Gateway Listener with 2 distinct TLS modes on the same port MUST have Accepted=False with Reason=ProtocolConflict',
  features: ['Gateway', 'TLSRoute', 'TLSRouteModeTerminate'],
  manifests: ['tests/tlsroute-listener-mixed-termination-not-supported.yaml'],
  test(s) {
    const mixed = SUPPORTED.has('TLSRouteModeMixed');
    it.skipIf(mixed)(
      'Listener with unsupported mixed Terminate/Passthrough must have Accepted=False with Reason=ProtocolConflict',
      () =>
        gatewayStatusMustHaveListeners(
          s.kube,
          s.timeoutConfig,
          { namespace: INFRA_NS, name: 'gateway-tlsroute-mixed-termination-not-supported' },
          [
            { name: 'tls-terminate', supportedKinds: [], conditions: conflict, attachedRoutes: 0 },
            { name: 'tls-passthrough', supportedKinds: [], conditions: conflict, attachedRoutes: 0 },
          ],
        ),
    );
    it.runIf(mixed)('TLSRouteModeMixed is supported: nothing to check (as upstream)', () => {});
  },
});
