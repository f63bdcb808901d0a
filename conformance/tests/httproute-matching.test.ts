// Upstream conformance test HTTPRouteMatching (Gateway API v1.6.1 conformance/tests/httproute-matching.go), with its
// manifest and expectations.
import { it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

const ns = INFRA_NS;
const v1 = 'infra-backend-v1';
const v2 = 'infra-backend-v2';

runConformanceTest({
  shortName: 'HTTPRouteMatching',
  description: 'A single HTTPRoute with path and header matching for different backends',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-matching.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'matching' };
    const gwNN = { namespace: ns, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('Gateway and HTTPRoute are accepted with resolved refs', async () => {
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
    });
    httpCases(s, () => gwAddr, [
      { request: { path: '/' }, backend: v1, namespace: ns },
      { request: { path: '/example' }, backend: v1, namespace: ns },
      { request: { path: '/', headers: { Version: 'one' } }, backend: v1, namespace: ns },
      { request: { path: '/v2' }, backend: v2, namespace: ns },
      { request: { path: '/v2/example' }, backend: v2, namespace: ns },
      { request: { path: '/', headers: { Version: 'two' } }, backend: v2, namespace: ns },
      { request: { path: '/v2/' }, backend: v2, namespace: ns },
      // Not a path segment prefix so should not match /v2.
      { request: { path: '/v2example' }, backend: v1, namespace: ns },
      { request: { path: '/foo/v2/example' }, backend: v1, namespace: ns },
    ]);
  },
});
