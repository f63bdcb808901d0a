// Upstream conformance test HTTPRouteExactPathMatching (Gateway API v1.6.1
// conformance/tests/httproute-exact-path-matching.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteExactPathMatching',
  description: 'A single HTTPRoute with exact path matching for different backends',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-exact-path-matching.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'exact-matching' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/one' }, backend: 'infra-backend-v1', namespace: ns },
      { request: { path: '/two' }, backend: 'infra-backend-v2', namespace: ns },
      { request: { path: '/' }, response: { statusCode: 404 } },
      { request: { path: '/one/example' }, response: { statusCode: 404 } },
      { request: { path: '/two/' }, response: { statusCode: 404 } },
      { request: { path: '/Two' }, response: { statusCode: 404 } },
    ]);
  },
});
