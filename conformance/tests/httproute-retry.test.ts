// Upstream conformance test HTTPRouteRetry (Gateway API v1.6.1 conformance/tests/httproute-retry.go), with its
// manifest and expectations: the echo's /retry simulation (responseCode, succeedAfter, a fresh uuid per probe so each
// probe's attempts are counted apart) behind rules with `retry` codes and attempts; each case must hold
// RequiredConsecutiveSuccesses times in a row (upstream's AwaitConvergence).
import { randomUUID } from 'node:crypto';
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { awaitConvergence, compareRoundTrip, type ExpectedResponse, makeRequest } from '../utils/http.ts';
import { captureRoundTrip } from '../utils/roundtrip.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const A3 = '/retry/code-500-attempts-3';
const A2 = '/retry/code-all-attempts-2';
const cases: [string, string, number, number, number][] = [
  ['succeeds after 2 retries when retry is configured for status code 500 and max attempts is 3', A3, 500, 2, 200],
  ['fails when required retries on 500 exceed max attempts', A3, 500, 4, 500],
  ['does not retry on 503 when retry is only configured for status code 500', A3, 503, 2, 503],
  ['succeeds after 1 retry on 500 when retry is configured for all status code and max attempts is 2', A2, 500, 1, 200],
  ['fails when required retries on 500 exceed max attempts', A2, 500, 3, 500],
  ['succeeds after 1 retry on 502 when retry is configured for all status code and max attempts is 2', A2, 502, 1, 200],
  ['fails when required retries on 502 exceed max attempts', A2, 502, 3, 502],
  ['succeeds after 1 retry on 503 when retry is configured for all status code and max attempts is 2', A2, 503, 1, 200],
  ['fails when required retries on 503 exceed max attempts', A2, 503, 3, 503],
  ['succeeds after 1 retry on 504 when retry is configured for all status code and max attempts is 2', A2, 504, 1, 200],
  ['fails when required retries on 504 exceed max attempts', A2, 504, 3, 504],
];

runConformanceTest({
  shortName: 'HTTPRouteRetry',
  description:
    'An HTTPRoute that has a Retry policy configured should retry failed requests according to the specified codes and attempt limits, returning a successful response when the backend recovers within the retry budget and surfacing the original error when it does not.',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteRetry'],
  manifests: ['tests/httproute-retry.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [{ namespace: ns, name: 'retries' }]);
    cases.forEach(([name, path, responseCode, succeedAfter, want], i) => {
      it.concurrent(`${i} request to '${path}' ${name}`, async () => {
        const gwAddr = addr();
        if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
        const tc = s.timeoutConfig;
        await awaitConvergence(tc.requiredConsecutiveSuccesses, tc.maxTimeToConsistency, async () => {
          const query = new URLSearchParams({ responseCode: String(responseCode), succeedAfter: String(succeedAfter) });
          query.set('uuid', randomUUID());
          const expected: ExpectedResponse = {
            request: { path: `${path}?${query}` },
            response: { statusCode: want },
            backend: 'infra-backend-v3',
            namespace: ns,
          };
          const req = makeRequest(expected, gwAddr, tc.requestTimeout);
          try {
            const { cReq, cRes } = await captureRoundTrip(req);
            return compareRoundTrip(req, cReq, cRes, expected);
          } catch (err) {
            return `request failed, not ready yet: ${(err as Error).message}`;
          }
        });
      });
    });
  },
});
