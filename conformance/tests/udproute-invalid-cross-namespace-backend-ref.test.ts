// Upstream conformance test UDPRouteInvalidCrossNamespaceBackendRef (Gateway API v1.6.1
// conformance/tests/udproute-invalid-cross-namespace-backend-ref.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'UDPRouteInvalidCrossNamespaceBackendRef',
  description:
    'A UDPRoute in the gateway-conformance-infra namespace should set ResolvedRefs=False with reason RefNotPermitted when its backendRef points to a Service in the gateway-conformance-app-backend namespace and no ReferenceGrant grants permission to that Service.',
  features: ['Gateway', 'UDPRoute', 'ReferenceGrant'],
  provisional: true,
  manifests: ['tests/udproute-invalid-cross-namespace-backend-ref.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'udp-route-invalid-cross-namespace-backend-ref' };
    const gwNN = { namespace: ns, name: 'udp-gateway-invalid-cross-namespace-backend-ref' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    routesAccepted(s, gwNN, [routeNN], { kind: 'UDPRoute' });
    it('UDPRoute with a cross-namespace BackendRef and no ReferenceGrant has a ResolvedRefs Condition with status False and Reason RefNotPermitted', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' },
        'UDPRoute',
      ));
  },
});
