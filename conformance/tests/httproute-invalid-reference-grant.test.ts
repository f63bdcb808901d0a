// Upstream conformance test HTTPRouteInvalidReferenceGrant (Gateway API v1.6.1
// conformance/tests/httproute-invalid-reference-grant.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS, WEB_BACKEND_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidReferenceGrant',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace, with a backendRef in another namespace without valid ReferenceGrant, should have the ResolvedRefs condition set to False and not forward HTTP requests to any backend',
  features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'],
  manifests: ['tests/httproute-invalid-reference-grant.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'reference-grant' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('HTTPRoute with BackendRef in another namespace and no ReferenceGrant covering the Service has a ResolvedRefs Condition with status False and Reason RefNotPermitted', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'RefNotPermitted',
      });
    });
    it('Simple HTTP request not should reach web-backend', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        request: { method: 'GET', path: '/' },
        response: { statusCode: 500 },
        backend: 'web-backend',
        namespace: WEB_BACKEND_NS,
      });
    });
  },
});
