// Upstream conformance test HTTPRouteReferenceGrant (Gateway API v1.6.1 conformance/tests/httproute-reference-grant.go),
// with its manifest and expectations: the route reaches web-backend through the grant, and 500s once it is deleted.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  GW,
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
} from '../utils/kubernetes.ts';
import { INFRA_NS, WEB_BACKEND_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteReferenceGrant',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace, with a backendRef in the gateway-conformance-web-backend namespace, should attach to Gateway in the gateway-conformance-infra namespace',
  features: ['Gateway', 'HTTPRoute', 'ReferenceGrant'],
  manifests: ['tests/httproute-reference-grant.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'reference-grant' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    let gwAddr: string | undefined;
    const addr = () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      return gwAddr;
    };
    it('Simple HTTP request should reach web-backend', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr(), {
        request: { method: 'GET', path: '/' },
        response: { statusCode: 200 },
        backend: 'web-backend',
        namespace: WEB_BACKEND_NS,
      });
    });
    it('Simple HTTP request should return 500 after deleting the relevant reference grant', async () => {
      await s.kube.delete({
        apiVersion: GW.replace('/v1', '/v1beta1'),
        kind: 'ReferenceGrant',
        metadata: { namespace: WEB_BACKEND_NS, name: 'reference-grant' },
      });
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr(), {
        request: { method: 'GET', path: '/' },
        response: { statusCode: 500 },
      });
    });
  },
});
