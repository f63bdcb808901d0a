// Upstream conformance test HTTPRouteRedirectPath (Gateway API v1.6.1 conformance/tests/httproute-redirect-path.go),
// with its manifest and expectations.
import { httpCases, redirectCase, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRedirectPath',
  description: 'An HTTPRoute with scheme redirect filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRoutePathRedirect'],
  manifests: ['tests/httproute-redirect-path.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'redirect-path' },
    ]);
    httpCases(s, addr, [
      redirectCase('/original-prefix/lemon', 302, { path: '/replacement-prefix/lemon' }, ns),
      redirectCase('/full/path/original', 302, { path: '/full-path-replacement' }, ns),
      redirectCase('/path-and-host', 302, { host: 'example.org', path: '/replacement-prefix' }, ns),
      redirectCase('/path-and-status', 301, { path: '/replacement-prefix' }, ns),
      redirectCase('/full-path-and-host', 302, { host: 'example.org', path: '/replacement-full' }, ns),
      redirectCase('/full-path-and-status', 301, { path: '/replacement-full' }, ns),
    ]);
  },
});
