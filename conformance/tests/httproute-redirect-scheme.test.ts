// Upstream conformance test HTTPRouteRedirectScheme (Gateway API v1.6.1
// conformance/tests/httproute-redirect-scheme.go), with its manifest and expectations.
import { httpCases, redirectCase, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRedirectScheme',
  description: 'An HTTPRoute with a scheme redirect filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteSchemeRedirect'],
  manifests: ['tests/httproute-redirect-scheme.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'redirect-scheme' },
    ]);
    httpCases(s, addr, [
      redirectCase('/scheme', 302, { scheme: 'https' }, ns),
      redirectCase('/scheme-and-host', 302, { host: 'example.org', scheme: 'https' }, ns),
      redirectCase('/scheme-and-status', 301, { scheme: 'https' }, ns),
      redirectCase('/scheme-and-host-and-status', 302, { scheme: 'https', host: 'example.org' }, ns),
    ]);
  },
});
