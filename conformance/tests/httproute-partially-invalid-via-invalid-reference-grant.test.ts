// Upstream conformance test HTTPRoutePartiallyInvalidViaInvalidReferenceGrant (Gateway API v1.6.1
// conformance/tests/httproute-partially-invalid-via-invalid-reference-grant.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveCondition } from '../utils/kubernetes.ts';
import { APP_BACKEND_NS, INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRoutePartiallyInvalidViaInvalidReferenceGrant',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should attach to a Gateway in the same namespace if the route has a backendRef Service in the gateway-conformance-app-backend namespace and a ReferenceGrant exists but does not grant permission to route to that specific Service',
  features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'],
  manifests: ['tests/httproute-partially-invalid-via-invalid-reference-grant.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'invalid-reference-grant' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    let gwAddr: string | undefined;
    const addr = () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      return gwAddr;
    };
    it('HTTPRoute with BackendRef in another namespace and no ReferenceGrant covering the Service has a ResolvedRefs Condition with status False and Reason RefNotPermitted', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'RefNotPermitted',
      });
    });
    it('HTTP Request to invalid backend with missing referenceGrant should receive a 500', () =>
      makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr(), {
        request: { method: 'GET', path: '/v2' },
        response: { statusCode: 500 },
      }));
    it('HTTP Request to valid sibling backend should succeed', () =>
      makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr(), {
        request: { method: 'GET', path: '/' },
        response: { statusCode: 200 },
        backend: 'app-backend-v1',
        namespace: APP_BACKEND_NS,
      }));
  },
});
