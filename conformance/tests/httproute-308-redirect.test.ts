// Upstream conformance test HTTPRoute308Redirect (Gateway API v1.6.1 conformance/tests/httproute-308-redirect.go,
// provisional), with its manifest and expectations.
import { httpCases, redirectCase, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRoute308Redirect',
  description: 'An HTTPRoute with a 308 path redirect filter',
  provisional: true,
  features: ['Gateway', 'HTTPRoute', 'HTTPRoute308RedirectStatusCode'],
  manifests: ['tests/httproute-308-redirect.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: '308-redirect' },
    ]);
    httpCases(s, addr, [redirectCase('/permanent', 308, { path: '/permanent' }, ns)]);
  },
});
