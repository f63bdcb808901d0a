// Upstream conformance test HTTPRoute307Redirect (Gateway API v1.6.1 conformance/tests/httproute-307-redirect.go,
// provisional), with its manifest and expectations.
import { httpCases, redirectCase, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRoute307Redirect',
  description: 'An HTTPRoute with a 307 path redirect filter',
  provisional: true,
  features: ['Gateway', 'HTTPRoute', 'HTTPRoute307RedirectStatusCode'],
  manifests: ['tests/httproute-307-redirect.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: '307-redirect' },
    ]);
    httpCases(s, addr, [redirectCase('/temporary', 307, { path: '/temporary' }, ns)]);
  },
});
