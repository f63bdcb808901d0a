// Upstream conformance test HTTPRouteHTTPSListenerDetectMisdirectedRequests (Gateway API v1.6.1
// conformance/tests/httproute-https-listener-detect-misdirected-requests.go), with its manifest and expectations:
// the base manifests' Gateway with four HTTPS listeners on 443 (none, second-example.org, *.wildcard.org,
// fourth-example.wildcard.org), a route on each; HTTP/2 requests whose Host belongs to another listener than the one
// the SNI chose get 421 Misdirected Request (RFC 9110 15.5.20), a Host no listener names gets 404 on the hostname-less
// listener's connection and 421 on the others'.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { getTLSSecret } from '../utils/certificates.ts';
import {
  type ExpectedResponse,
  makeTLSRequestAndExpectEventuallyConsistentResponse,
  testCaseName,
} from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { H2 } from '../utils/roundtrip-h2.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

// [serverName, host, statusCode, backend] as upstream's table.
const cases: [string, string, number, string | undefined][] = [
  ['example.org', 'example.org', 200, 'infra-backend-v1'],
  ['example.org', 'second-example.org', 421, undefined],
  ['example.org', 'unknown-example.org', 404, undefined],
  ['second-example.org', 'second-example.org', 200, 'infra-backend-v2'],
  ['second-example.org', 'example.org', 421, undefined],
  ['second-example.org', 'unknown-example.org', 421, undefined],
  ['third-example.wildcard.org', 'third-example.wildcard.org', 200, 'infra-backend-v3'],
  ['third-example.wildcard.org', 'fith-example.wildcard.org', 200, 'infra-backend-v3'],
  ['third-example.wildcard.org', 'fourth-example.wildcard.org', 421, undefined],
  ['third-example.wildcard.org', 'second-example.org', 421, undefined],
  ['third-example.wildcard.org', 'unknown-example.org', 421, undefined],
  // Upstream: "Since infra-backend-v4 does not exist, infra-backend-v1 is reused for the fourth HTTPRoute".
  ['fourth-example.wildcard.org', 'fourth-example.wildcard.org', 200, 'infra-backend-v1'],
  ['fourth-example.wildcard.org', 'fith-example.wildcard.org', 421, undefined],
  ['unknown-example.org', 'example.org', 200, 'infra-backend-v1'],
  ['unknown-example.org', 'unknown-example.org', 404, undefined],
];

runConformanceTest({
  shortName: 'HTTPRouteHTTPSListenerDetectMisdirectedRequests',
  description: 'HTTPS listeners on the same port detect misdirected requests and return HTTP 421 when appropriate',
  features: ['Gateway', 'GatewayHTTPSListenerDetectMisdirectedRequests', 'HTTPRoute'],
  manifests: ['tests/httproute-https-listener-detect-misdirected-requests.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace-with-https-listener' };
    let gwAddr: string | undefined;
    let cert: string | undefined;
    it('Gateway and HTTPRoutes must be accepted', async () => {
      const routes = [1, 2, 3, 4].map((i) => ({
        namespace: ns,
        name: `https-listener-detect-misdirected-requests-test-${i}`,
      }));
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, routes);
      for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gwNN);
      cert = (await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-certificate' })).cert;
    });
    cases.forEach(([serverName, host, statusCode, backend], i) => {
      const expected: ExpectedResponse = {
        request: { host, path: '/detect-misdirected-requests', protocol: H2 },
        response: { statusCodes: [statusCode] },
        backend,
        namespace: ns,
      };
      it(testCaseName(expected, i), async () => {
        if (!gwAddr || !cert) throw new Error('no gateway address or certificate: the status case of this test failed');
        await makeTLSRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, cert, serverName, expected);
      });
    });
  },
});
