// Upstream conformance test HTTPRouteTimeoutBackendRequest (Gateway API v1.6.1 conformance/tests/httproute-timeout-backend-request.go), with its
// manifest and expectations: the echo backend's `delay` query parameter makes it answer after 1 s.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteTimeoutBackendRequest',
  description: 'An HTTPRoute with backend request timeout',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendTimeout'],
  manifests: ['tests/httproute-timeout-backend-request.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'backend-request-timeout' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/backend-timeout' }, response: { statusCode: 200 }, namespace: ns },
      { request: { path: '/backend-timeout?delay=1s' }, response: { statusCode: 504 }, namespace: ns },
      { request: { path: '/disable-backend-timeout?delay=1s' }, response: { statusCode: 200 }, namespace: ns },
    ]);
  },
});
