// Upstream conformance test TCPRouteInvalidCrossNamespaceBackendRef (Gateway API v1.6.1
// conformance/tests/tcproute-invalid-cross-namespace-backend-ref.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns, WEB_BACKEND_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TCPRouteInvalidCrossNamespaceBackendRef',
  description:
    'A TCPRoute in the gateway-conformance-infra namespace with a backendRef in the gateway-conformance-web-backend namespace and no matching ReferenceGrant should set ResolvedRefs=False with reason RefNotPermitted.',
  features: ['Gateway', 'TCPRoute', 'ReferenceGrant'],
  provisional: true,
  manifests: ['tests/tcproute-invalid-cross-namespace-backend-ref.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'tcp-invalid-cross-namespace-backend-ref' };
    const gwNN = { namespace: ns, name: 'tcp-invalid-cross-namespace-backend-ref-gateway' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns, WEB_BACKEND_NS]));
    routesAccepted(s, { ...gwNN, listenerNames: ['tcp'] }, [routeNN], { kind: 'TCPRoute' });
    it('TCPRoute with a cross-namespace backendRef and no ReferenceGrant has ResolvedRefs=False with reason RefNotPermitted', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' },
        'TCPRoute',
      ));
  },
});
