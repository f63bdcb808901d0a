// Upstream conformance test HTTPRouteInvalidCrossNamespaceBackendRef (Gateway API v1.6.1 conformance/tests/httproute-invalid-cross-namespace-backend-ref.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidCrossNamespaceBackendRef',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason RefNotPermitted when attempting to bind to a Gateway in the same namespace if the route has a BackendRef Service in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to route to that Service does not exist',
  features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'],
  manifests: ['tests/httproute-invalid-cross-namespace-backend-ref.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'invalid-cross-namespace-backend-ref' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('HTTPRoute with a cross-namespace BackendRef and no ReferenceGrant has a ResolvedRefs Condition with status False and Reason RefNotPermitted', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'RefNotPermitted',
      });
    });
    it('HTTP Request to invalid cross-namespace backend must receive a 500', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        request: { method: 'GET', path: '/' },
        response: { statusCode: 500 },
      });
    });
  },
});
