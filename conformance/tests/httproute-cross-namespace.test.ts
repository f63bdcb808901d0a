// Upstream conformance test HTTPRouteCrossNamespace (Gateway API v1.6.1
// conformance/tests/httproute-cross-namespace.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS, WEB_BACKEND_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteCrossNamespace',
  description:
    'A single HTTPRoute in the gateway-conformance-web-backend namespace should attach to Gateway in another namespace',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-cross-namespace.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: INFRA_NS, name: 'backend-namespaces' }, [
      { namespace: WEB_BACKEND_NS, name: 'cross-namespace' },
    ]);
    httpCases(s, addr, [
      {
        testCaseName: 'Simple HTTP request should reach web-backend',
        request: { path: '/' },
        response: { statusCode: 200 },
        backend: 'web-backend',
        namespace: WEB_BACKEND_NS,
      },
    ]);
  },
});
