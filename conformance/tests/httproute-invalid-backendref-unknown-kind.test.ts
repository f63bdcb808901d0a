// Upstream conformance test HTTPRouteInvalidBackendRefUnknownKind (Gateway API v1.6.1 conformance/tests/httproute-invalid-backendref-unknown-kind.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidBackendRefUnknownKind',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason InvalidKind when attempting to bind to a Gateway in the same namespace if the route has a BackendRef that points to an unknown Kind.',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-invalid-backendref-unknown-kind.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'invalid-backend-ref-unknown-kind' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('HTTPRoute with Invalid Kind has a ResolvedRefs Condition with status False and Reason InvalidKind', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'InvalidKind',
      });
    });
    it('HTTP Request to invalid backend with invalid Kind receives a 500', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        request: { method: 'GET', path: '/v2' },
        response: { statusCode: 500 },
      });
    });
  },
});
