// Upstream conformance test HTTPRouteInvalidNonExistentBackendRef (Gateway API v1.6.1 conformance/tests/httproute-invalid-nonexistent-backendref.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidNonExistentBackendRef',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason BackendNotFound and return 500 when binding to a Gateway in the same namespace if the route has a BackendRef Service that does not exist',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-invalid-nonexistent-backendref.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'invalid-nonexistent-backend-ref' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('HTTPRoute with only a nonexistent BackendRef has a ResolvedRefs Condition with status False and Reason BackendNotFound', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'BackendNotFound',
      });
    });
    it('HTTP Request to invalid nonexistent backend receive a 500', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        request: { method: 'GET', path: '/' },
        response: { statusCode: 500 },
      });
    });
  },
});
