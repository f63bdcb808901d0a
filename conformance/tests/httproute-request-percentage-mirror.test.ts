// Upstream conformance test HTTPRouteRequestPercentageMirror (Gateway API v1.6.1
// conformance/tests/httproute-request-percentage-mirror.go, provisional), with its manifest and expectations: per
// case, up to 5 rounds of 500 requests (10 at a time, each with a fresh request id per round) and the mirror
// backend's log count within 3 binomial standard deviations of percent x 500.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import {
  type ExpectedResponse,
  makeRequestAndExpectEventuallyConsistentResponse,
  testCaseName,
} from '../utils/http.ts';
import { dumpEchoLogs, mirrorLogRegexp, withRequestId } from '../utils/mirror.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const CONCURRENT_REQUESTS = 10;
const TOLERANCE_STD_DEVS = 3.0;
const TOTAL_REQUESTS = 500;
const NUM_DISTRIBUTION_CHECKS = 5;

type Case = ExpectedResponse & { mirroredTo: { name: string; namespace: string; percent: number }[] };

const mirrorTo = (percent: number) => [{ name: 'infra-backend-v2', namespace: ns, percent }];
const cases: Case[] = [
  {
    request: { path: '/percent-mirror' },
    namespace: ns,
    expectedRequest: { path: '/percent-mirror' },
    backend: 'infra-backend-v1',
    mirroredTo: mirrorTo(20),
  },
  {
    request: { path: '/percent-mirror-fraction' },
    namespace: ns,
    expectedRequest: { path: '/percent-mirror-fraction' },
    backend: 'infra-backend-v1',
    mirroredTo: mirrorTo(50),
  },
  {
    request: {
      path: '/percent-mirror-and-modify-headers',
      headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
    },
    expectedRequest: {
      path: '/percent-mirror-and-modify-headers',
      headers: {
        'X-Header-Add': 'header-val-1',
        'X-Header-Add-Append': 'append-val-1,header-val-2',
        'X-Header-Set': 'set-overwrites-values',
      },
      absentHeaders: ['X-Header-Remove'],
    },
    namespace: ns,
    backend: 'infra-backend-v1',
    mirroredTo: mirrorTo(35),
  },
];

runConformanceTest({
  shortName: 'HTTPRouteRequestPercentageMirror',
  description: 'An HTTPRoute with percentage based request mirroring',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestPercentageMirror'],
  provisional: true,
  manifests: ['tests/httproute-request-percentage-mirror.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'request-percentage-mirror' },
    ]);
    cases.forEach((c, i) => {
      it(testCaseName(c, i), async () => {
        const gwAddr = addr();
        if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
        await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, c);
        const once = { ...s.timeoutConfig, requiredConsecutiveSuccesses: 1 };
        const misses: string[] = [];
        for (let k = 0; k < NUM_DISTRIBUTION_CHECKS; k++) {
          const tc = withRequestId(c, randomUUID());
          const since = Date.now();
          let next = 0;
          const worker = async () => {
            while (next++ < TOTAL_REQUESTS) await makeRequestAndExpectEventuallyConsistentResponse(once, gwAddr, tc);
          };
          await Promise.all(Array.from({ length: CONCURRENT_REQUESTS }, worker));
          const miss = await distributionMiss(s.kube, tc, c.mirroredTo, since);
          if (!miss) return;
          misses.push(`(${k + 1}/${NUM_DISTRIBUTION_CHECKS}) ${miss}`);
          await sleep(2000);
        }
        throw new Error(`Percentage based mirror distribution tests failed:\n${misses.join('\n')}`);
      });
    });
  },
});

/** Upstream's testMirroredRequestsDistribution: undefined when every mirror's count is within tolerance. */
async function distributionMiss(
  kube: Parameters<typeof dumpEchoLogs>[0],
  tc: ExpectedResponse,
  mirrors: Case['mirroredTo'],
  since: number,
): Promise<string | undefined> {
  const re = mirrorLogRegexp(tc.request.path ?? '');
  const errs: string[] = [];
  for (const m of mirrors) {
    const logs = await dumpEchoLogs(kube, m.namespace, m.name, since);
    const actual = logs.filter((l) => re.test(l)).length;
    const p = m.percent / 100;
    const expected = TOTAL_REQUESTS * p;
    const margin = TOLERANCE_STD_DEVS * Math.sqrt(TOTAL_REQUESTS * p * (1 - p));
    if (actual < expected - margin || actual > expected + margin)
      errs.push(
        `pod ${m.name} did not meet the mirroring percentage within tolerance. Expected between ${expected - margin} and ${expected + margin}, but got ${actual}`,
      );
  }
  return errs.length ? errs.join('; ') : undefined;
}
