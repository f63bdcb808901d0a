// Upstream conformance test HTTPRouteSimpleSameNamespace (Gateway API v1.6.1
// conformance/tests/httproute-simple-same-namespace.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteSimpleSameNamespace',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace attaches to a Gateway in the same namespace',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-simple-same-namespace.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'gateway-conformance-infra-test' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    it('Simple HTTP request should reach infra-backend', async () => {
      const gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        request: { path: '/' },
        response: { statusCode: 200 },
        backend: 'infra-backend-v1',
        namespace: INFRA_NS,
      });
    });
  },
});
