// Upstream conformance test HTTPRouteListenerPortMatching (Gateway API v1.6.1
// conformance/tests/httproute-listener-port-matching.go), with its manifest and expectations: each request goes to the
// listener port its Host names (80 when none).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  type ExpectedResponse,
  makeRequestAndExpectEventuallyConsistentResponse,
  testCaseName,
} from '../utils/http.ts';
import {
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const cases: ExpectedResponse[] = [
  { request: { host: 'foo.com', path: '/' }, backend: 'infra-backend-v1', namespace: ns },
  { request: { host: 'foo.com:8080', path: '/' }, backend: 'infra-backend-v2', namespace: ns },
  { request: { host: 'bar.com:8080', path: '/' }, backend: 'infra-backend-v2', namespace: ns },
  { request: { host: 'foo.com:8090', path: '/' }, backend: 'infra-backend-v3', namespace: ns },
  { request: { host: 'bar.com:8090', path: '/' }, response: { statusCode: 404 } },
];

runConformanceTest({
  shortName: 'HTTPRouteListenerPortMatching',
  description: 'Multiple HTTP listeners with different ports, each with a different HTTPRoute',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteParentRefPort'],
  manifests: ['tests/httproute-listener-port-matching.yaml'],
  test(s) {
    const gw = { namespace: ns, name: 'httproute-listener-port-matching' };
    const addrs = new Map<string, string>();
    it('Gateway and HTTPRoutes must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      for (const [listener, route, port] of [
        ['listener-1', 'backend-v1', '80'],
        ['listener-2', 'backend-v2', '8080'],
        ['listener-4', 'backend-v3', '8090'],
      ]) {
        const r = { namespace: ns, name: route };
        const a = await gatewayAndRoutesMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { ...gw, listenerNames: [listener] },
          [r],
        );
        await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gw);
        addrs.set(port, a);
      }
    });
    cases.forEach((tc, i) => {
      it.concurrent(testCaseName(tc, i), async () => {
        const port = tc.request.host?.split(':')[1] ?? '80';
        const a = addrs.get(port === '8080' || port === '8090' ? port : '80');
        if (!a) throw new Error('no gateway address: the status case of this test failed');
        await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, a, tc);
      });
    });
  },
});
