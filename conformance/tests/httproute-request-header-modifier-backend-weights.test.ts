// Upstream conformance test HTTPRouteRequestHeaderModifierBackendWeights (Gateway API v1.6.1
// conformance/tests/httproute-request-header-modifier-backend-weights.go), with its manifest and expectations: each
// weighted backendRef sets a Backend header naming itself, and 100 requests must each reach the pod that header names.
import { expect, it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { type ExpectedResponse, makeRequest, makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import { captureRoundTrip } from '../utils/roundtrip.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRequestHeaderModifierBackendWeights',
  description: 'An HTTPRoute with backend request header modifier filter sends traffic to the correct backends',
  features: ['Gateway', 'HTTPRouteBackendRequestHeaderModification', 'HTTPRoute'],
  manifests: ['tests/httproute-request-header-modifier-backend-weights.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'request-header-modifier-backend-weights' },
    ]);
    it('requests reach the backend their Backend header names', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      const expected: ExpectedResponse = { request: { path: '/' }, response: { statusCode: 200 }, namespace: ns };
      const req = makeRequest(expected, gwAddr, s.timeoutConfig.requestTimeout);
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, expected);
      for (let i = 0; i < 100; i++) {
        const { cReq } = await captureRoundTrip(req);
        const backends = Object.entries(cReq.headers ?? {}).find(([k]) => k.toLowerCase() === 'backend')?.[1] ?? [];
        expect(backends, "expected a single 'Backend' header to have been set").toHaveLength(1);
        expect(
          (cReq.pod ?? '').startsWith(backends[0]),
          `expected the backendRef to have set the correct headers and sent the request to the correct pod, got "${cReq.pod}", want "${backends[0]}"`,
        ).toBe(true);
      }
    });
  },
});
