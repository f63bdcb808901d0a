// Upstream conformance test HTTPRoutePathMatchOrder (Gateway API v1.6.1
// conformance/tests/httproute-path-match-order.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRoutePathMatchOrder',
  description:
    'An HTTPRoute where there are multiple matches routing to any given backend follows match order precedence',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-path-match-order.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'path-matching-order' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/match/exact/one' }, backend: 'infra-backend-v3', namespace: ns },
      { request: { path: '/match/exact' }, backend: 'infra-backend-v2', namespace: ns },
      { request: { path: '/match' }, backend: 'infra-backend-v1', namespace: ns },
      { request: { path: '/match/prefix/one/any' }, backend: 'infra-backend-v2', namespace: ns },
      { request: { path: '/match/prefix/any' }, backend: 'infra-backend-v1', namespace: ns },
      { request: { path: '/match/any' }, backend: 'infra-backend-v3', namespace: ns },
    ]);
  },
});
