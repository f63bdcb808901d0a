// Upstream conformance test HTTPRouteQueryParamMatching (Gateway API v1.6.1
// conformance/tests/httproute-query-param-matching.go), with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const to = (path: string, backend: string, headers?: Record<string, string>): ExpectedResponse => ({
  request: { path, ...(headers ? { headers } : {}) },
  backend: `infra-backend-${backend}`,
  namespace: ns,
});
const notFound = (path: string): ExpectedResponse => ({ request: { path }, response: { statusCode: 404 } });

runConformanceTest({
  shortName: 'HTTPRouteQueryParamMatching',
  description: 'A single HTTPRoute with query param matching for different backends',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteQueryParamMatching'],
  manifests: ['tests/httproute-query-param-matching.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'query-param-matching' },
    ]);
    httpCases(s, addr, [
      to('/?animal=whale', 'v1'),
      to('/?animal=dolphin', 'v2'),
      to('/?animal=dolphin&color=blue', 'v3'),
      to('/?ANIMAL=Whale', 'v3'),
      to('/?animal=whale&otherparam=irrelevant', 'v1'),
      to('/?animal=dolphin&color=yellow', 'v2'),
      notFound('/?color=blue'),
      notFound('/?animal=dog'),
      notFound('/?animal=whaledolphin'),
      notFound('/'),
      to('/path1?animal=whale', 'v1'),
      to('/?animal=whale', 'v2', { version: 'one' }),
      to('/path2?animal=whale', 'v3', { version: 'two' }),
      to('/path3?animal=shark', 'v1'),
      to('/path4?animal=kraken', 'v1', { version: 'three' }),
      notFound('/?animal=shark'),
      notFound('/path4?animal=kraken'),
      to('/path5?animal=hydra', 'v1'),
      to('/?animal=hydra', 'v3', { version: 'four' }),
    ]);
  },
});
