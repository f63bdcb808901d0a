// Upstream conformance test UDPRouteInvalidBackendRefNonexistent (Gateway API v1.6.1
// conformance/tests/udproute-invalid-backendref-nonexistent.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'UDPRouteInvalidBackendRefNonexistent',
  description:
    'A UDPRoute should set ResolvedRefs=False with reason BackendNotFound when its backendRef points to a Service that does not exist.',
  features: ['Gateway', 'UDPRoute'],
  provisional: true,
  manifests: ['tests/udproute-invalid-backendref-nonexistent.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'udp-route-invalid-backend-ref-nonexistent' };
    const gwNN = { namespace: ns, name: 'udp-gateway-invalid-backend' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it('UDPRoute with a nonexistent backend has ResolvedRefs=False and reason BackendNotFound', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound' },
        'UDPRoute',
      ));
  },
});
