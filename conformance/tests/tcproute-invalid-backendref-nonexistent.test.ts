// Upstream conformance test TCPRouteInvalidBackendRefNonexistent (Gateway API v1.6.1
// conformance/tests/tcproute-invalid-backendref-nonexistent.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TCPRouteInvalidBackendRefNonexistent',
  description:
    'A TCPRoute should set ResolvedRefs=False with reason BackendNotFound when its backendRef points to a Service that does not exist.',
  features: ['Gateway', 'TCPRoute'],
  provisional: true,
  manifests: ['tests/tcproute-invalid-backendref-nonexistent.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'tcp-route-invalid-backend-ref-nonexistent' };
    const gwNN = { namespace: ns, name: 'tcp-gateway-invalid-backend' };
    it('TCPRoute with a nonexistent backend has ResolvedRefs=False and reason BackendNotFound', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      await routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound' },
        'TCPRoute',
      );
    });
  },
});
