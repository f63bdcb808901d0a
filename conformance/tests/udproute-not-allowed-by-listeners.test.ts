// Upstream conformance test UDPRouteNotAllowedByListeners (Gateway API v1.6.1
// conformance/tests/udproute-not-allowed-by-listeners.go, provisional), with its manifest and expectations. Upstream
// returns without checking anything unless the implementation supports TLSRoute (the Gateway's only listener is a TLS
// one); so does this port, as a case that says so.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { SUPPORTED } from '../utils/features.ts';
import { gatewayMustHaveZeroRoutes, namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'UDPRouteNotAllowedByListeners',
  description:
    'A UDPRoute targeting a Gateway listener whose protocol is not UDP must report Accepted=False with reason NotAllowedByListeners and must not be attached to the listener.',
  features: ['Gateway', 'UDPRoute'],
  provisional: true,
  manifests: ['tests/udproute-not-allowed-by-listeners.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'udproute-tls-only-gateway' };
    const routeNN = { namespace: ns, name: 'udproute-not-allowed-by-listeners' };
    const tls = SUPPORTED.has('TLSRoute');
    it.skipIf(!tls)('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it.skipIf(!tls)('UDPRoute should have Accepted=False with reason NotAllowedByListeners', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners' },
        'UDPRoute',
      ),
    );
    it.skipIf(!tls)('Gateway should have 0 Routes attached on the TLS listener', () =>
      gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, gwNN),
    );
  },
});
