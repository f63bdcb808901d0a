// Upstream conformance test HTTPRouteListenerHostnameMatching (Gateway API v1.6.1
// conformance/tests/httproute-listener-hostname-matching.go), with its manifest and expectations.
import { it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import {
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteListenerHostnameMatching',
  description: 'Multiple HTTP listeners with the same port and different hostnames, each with a different HTTPRoute',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-listener-hostname-matching.yaml'],
  test(s) {
    const gw = { namespace: ns, name: 'httproute-listener-hostname-matching' };
    let addr: string | undefined;
    it('Gateway and HTTPRoutes must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const steps: [string[], string][] = [
        [['listener-1'], 'backend-v1'],
        [['listener-2'], 'backend-v2'],
        [['listener-3', 'listener-4'], 'backend-v3'],
      ];
      for (const [listenerNames, name] of steps) {
        const route = { namespace: ns, name };
        addr = await gatewayAndRoutesMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { ...gw, listenerNames },
          [route],
        );
        await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, route, gw);
      }
    });
    httpCases(s, () => addr, [
      { request: { host: 'bar.com', path: '/' }, backend: 'infra-backend-v1', namespace: ns },
      { request: { host: 'foo.bar.com', path: '/' }, backend: 'infra-backend-v2', namespace: ns },
      { request: { host: 'baz.bar.com', path: '/' }, backend: 'infra-backend-v3', namespace: ns },
      { request: { host: 'boo.bar.com', path: '/' }, backend: 'infra-backend-v3', namespace: ns },
      { request: { host: 'multiple.prefixes.bar.com', path: '/' }, backend: 'infra-backend-v3', namespace: ns },
      { request: { host: 'multiple.prefixes.foo.com', path: '/' }, backend: 'infra-backend-v3', namespace: ns },
      { request: { host: 'foo.com', path: '/' }, response: { statusCode: 404 } },
      { request: { host: 'no.matching.host', path: '/' }, response: { statusCode: 404 } },
    ]);
  },
});
