// Upstream conformance test TCPRouteInvalidNonTCPListener (Gateway API v1.6.1
// conformance/tests/tcproute-invalid-non-tcp-listener.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayMustHaveZeroRoutes, namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TCPRouteInvalidNonTCPListener',
  description:
    'A TCPRoute should set Accepted=False with reason NotAllowedByListeners when attaching to a non-TCP listener via sectionName.',
  features: ['Gateway', 'TCPRoute'],
  provisional: true,
  manifests: ['tests/tcproute-invalid-non-tcp-listener.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'tcp-route' };
    const gwNN = { namespace: ns, name: 'tcp-mixed-protocol-gateway' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it('TCPRoute targeting a listener that has no protocol type TCP must have Accepted=False with reason NotAllowedByListeners', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners' },
        'TCPRoute',
      ));
    it('Gateway should have 0 Routes attached', () => gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, gwNN));
  },
});
