// Upstream conformance test HTTPRouteTimeoutRequest (Gateway API v1.6.1 conformance/tests/httproute-timeout-request.go), with its
// manifest and expectations: the echo backend's `delay` query parameter makes it answer after 1 s.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteTimeoutRequest',
  description: 'An HTTPRoute with request timeout',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestTimeout'],
  manifests: ['tests/httproute-timeout-request.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'request-timeout' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/request-timeout' }, response: { statusCode: 200 }, namespace: ns },
      { request: { path: '/request-timeout?delay=1s' }, response: { statusCode: 504 }, namespace: ns },
      { request: { path: '/disable-request-timeout?delay=1s' }, response: { statusCode: 200 }, namespace: ns },
    ]);
  },
});
