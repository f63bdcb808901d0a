// Upstream conformance test HTTPRouteMethodMatching (Gateway API v1.6.1
// conformance/tests/httproute-method-matching.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const to = (method: string, path: string, backend: string, headers?: Record<string, string>): ExpectedResponse => ({
  request: { method, path, ...(headers ? { headers } : {}) },
  backend: `infra-backend-${backend}`,
  namespace: ns,
});
const notFound = (method: string, path: string): ExpectedResponse => ({
  request: { method, path },
  response: { statusCode: 404 },
});

runConformanceTest({
  shortName: 'HTTPRouteMethodMatching',
  description: 'A single HTTPRoute with method matching for different backends',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteMethodMatching'],
  manifests: ['tests/httproute-method-matching.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'method-matching' },
    ]);
    httpCases(s, addr, [
      to('POST', '/', 'v1'),
      to('GET', '/', 'v2'),
      notFound('HEAD', '/'),
      to('GET', '/path1', 'v1'),
      to('PUT', '/', 'v2', { version: 'one' }),
      to('POST', '/path2', 'v3', { version: 'two' }),
      to('PATCH', '/path3', 'v1'),
      to('DELETE', '/path4', 'v1', { version: 'three' }),
      notFound('PUT', '/'),
      notFound('DELETE', '/path4'),
      to('PATCH', '/path5', 'v1'),
      to('PATCH', '/', 'v2', { version: 'four' }),
    ]);
  },
});
