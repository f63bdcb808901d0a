// Upstream conformance test HTTPRouteHeaderMatching (Gateway API v1.6.1
// conformance/tests/httproute-header-matching.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const v1 = 'infra-backend-v1';
const v2 = 'infra-backend-v2';

runConformanceTest({
  shortName: 'HTTPRouteHeaderMatching',
  description: 'A single HTTPRoute with header matching for different backends',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-header-matching.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'header-matching' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/', headers: { Version: 'one' } }, backend: v1, namespace: ns },
      { request: { path: '/', headers: { Version: 'two' } }, backend: v2, namespace: ns },
      { request: { path: '/', headers: { Version: 'two', Color: 'orange' } }, backend: v1, namespace: ns },
      { request: { path: '/', headers: { Version: 'two', Color: 'blue' } }, backend: v2, namespace: ns },
      { request: { path: '/', headers: { Color: 'orange' } }, response: { statusCode: 404 } },
      { request: { path: '/', headers: { 'Some-Other-Header': 'one' } }, response: { statusCode: 404 } },
      { request: { path: '/', headers: { Color: 'blue' } }, backend: v1, namespace: ns },
      { request: { path: '/', headers: { Color: 'green' } }, backend: v1, namespace: ns },
      { request: { path: '/', headers: { Color: 'red' } }, backend: v2, namespace: ns },
      { request: { path: '/', headers: { Color: 'yellow' } }, backend: v2, namespace: ns },
      { request: { path: '/', headers: { Color: 'purple' } }, response: { statusCode: 404 } },
    ]);
  },
});
