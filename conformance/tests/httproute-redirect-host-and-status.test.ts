// Upstream conformance test HTTPRouteRedirectHostAndStatus (Gateway API v1.6.1
// conformance/tests/httproute-redirect-host-and-status.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRedirectHostAndStatus',
  description: 'An HTTPRoute with hostname and statusCode redirect filters',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-redirect-host-and-status.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'redirect-host-and-status' },
    ]);
    httpCases(s, addr, [
      {
        request: { path: '/hostname-redirect', unfollowRedirect: true },
        response: { statusCode: 302 },
        redirectRequest: { host: 'example.org' },
        namespace: ns,
      },
      {
        request: { path: '/host-and-status', unfollowRedirect: true },
        response: { statusCode: 301 },
        redirectRequest: { host: 'example.org' },
        namespace: ns,
      },
    ]);
  },
});
