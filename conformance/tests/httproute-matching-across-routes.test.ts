// Upstream conformance test HTTPRouteMatchingAcrossRoutes (Gateway API v1.6.1
// conformance/tests/httproute-matching-across-routes.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const v1 = 'infra-backend-v1';
const v2 = 'infra-backend-v2';

runConformanceTest({
  shortName: 'HTTPRouteMatchingAcrossRoutes',
  description: 'Two HTTPRoutes with path matching for different backends',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-matching-across-routes.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'matching-part1' },
      { namespace: ns, name: 'matching-part2' },
    ]);
    httpCases(s, addr, [
      { request: { host: 'example.com', path: '/' }, backend: v1, namespace: ns },
      { request: { host: 'example.com', path: '/example' }, backend: v1, namespace: ns },
      { request: { host: 'example.net', path: '/example' }, backend: v1, namespace: ns },
      { request: { host: 'example.com', path: '/example', headers: { Version: 'one' } }, backend: v1, namespace: ns },
      { request: { host: 'example.com', path: '/v2' }, backend: v2, namespace: ns },
      { request: { host: 'example.net', path: '/v2' }, backend: v1, namespace: ns },
      { request: { host: 'example.com', path: '/v2/example' }, backend: v2, namespace: ns },
      { request: { host: 'example.com', path: '/', headers: { Version: 'two' } }, backend: v2, namespace: ns },
    ]);
  },
});
