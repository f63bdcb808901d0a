// Upstream conformance test HTTPRouteWeight (Gateway API v1.6.1 conformance/tests/httproute-weight.go), with its
// manifest and expectations: 70/30/0 across infra-backend-v1/v2/v3 by upstream's weighted-distribution check.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import {
  compareRoundTrip,
  type ExpectedResponse,
  makeRequest,
  makeRequestAndExpectEventuallyConsistentResponse,
} from '../utils/http.ts';
import { captureRoundTrip } from '../utils/roundtrip.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { MAX_TEST_RETRIES, randomEntropy, testWeightedDistribution } from '../utils/weight.ts';

runConformanceTest({
  shortName: 'HTTPRouteWeight',
  description: 'An HTTPRoute with weighted backends',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-weight.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'weighted-backends' },
    ]);
    it('Requests should have a distribution that matches the weight', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      const expected: ExpectedResponse = { request: { path: '/' }, response: { statusCodes: [200] }, namespace: ns };
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, expected);
      const send = async () => {
        const unique: ExpectedResponse = { ...expected, request: { ...expected.request, headers: randomEntropy() } };
        const req = makeRequest(unique, gwAddr, s.timeoutConfig.requestTimeout);
        const { cReq, cRes } = await captureRoundTrip(req);
        const miss = compareRoundTrip(req, cReq, cRes, expected);
        if (miss) throw new Error(`response expectation failed for request: ${miss}`);
        return cReq.pod;
      };
      const weights = { 'infra-backend-v1': 0.7, 'infra-backend-v2': 0.3, 'infra-backend-v3': 0 };
      const tries: string[] = [];
      for (let i = 0; i < MAX_TEST_RETRIES; i++) {
        const miss = await testWeightedDistribution(send, weights);
        if (!miss) return;
        tries.push(`(${i + 1}/${MAX_TEST_RETRIES}) ${miss}`);
      }
      throw new Error(`Weighted distribution tests failed:\n${tries.join('\n')}`);
    });
  },
});
