// Upstream conformance test HTTPRouteNamedRule (Gateway API v1.6.1 conformance/tests/httproute-named-rule.go,
// provisional), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteNamedRule',
  description: 'An HTTPRoute with a named HTTPRouteRule',
  provisional: true,
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteNamedRouteRule'],
  manifests: ['tests/httproute-named-rule.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'http-named-rules' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/named' }, response: { statusCode: 200 }, namespace: ns },
      { request: { path: '/unnamed' }, response: { statusCode: 200 }, namespace: ns },
    ]);
  },
});
