// Upstream conformance test HTTPRoute303Redirect (Gateway API v1.6.1 conformance/tests/httproute-303-redirect.go,
// provisional), with its manifest and expectations.
import { httpCases, redirectCase, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRoute303Redirect',
  description: 'An HTTPRoute with a 303 redirect filter',
  provisional: true,
  features: ['Gateway', 'HTTPRoute', 'HTTPRoute303RedirectStatusCode'],
  manifests: ['tests/httproute-303-redirect.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: '303-redirect' },
    ]);
    httpCases(s, addr, [redirectCase('/see-other', 303, { path: '/see-other' }, ns, 'POST')]);
  },
});
