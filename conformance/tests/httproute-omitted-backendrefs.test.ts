// Upstream conformance test HTTPRouteNoBackendRefs (Gateway API v1.6.1
// conformance/tests/httproute-omitted-backendrefs.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteNoBackendRefs',
  description: 'HTTPRoute rules with omitted or empty backendRefs explicitly respond with 500',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-omitted-backendrefs.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'omitted-backendrefs' },
    ]);
    httpCases(s, addr, [
      { request: { path: '/forward' }, backend: 'infra-backend-v1', namespace: ns },
      { request: { path: '/omitted-no-forward' }, response: { statusCode: 500 } },
      { request: { path: '/empty-no-forward' }, response: { statusCode: 500 } },
    ]);
  },
});
