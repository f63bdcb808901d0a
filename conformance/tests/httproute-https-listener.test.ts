// Upstream conformance test HTTPRouteHTTPSListener (Gateway API v1.6.1 conformance/tests/httproute-https-listener.go),
// with its manifest and expectations: HTTPS requests through the base manifests' HTTPS Gateway, trusting the
// certificate the suite generated (tls-validity-checks-certificate).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  type ExpectedResponse,
  makeTLSRequestAndExpectEventuallyConsistentResponse,
  testCaseName,
} from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const cases: [string, number, string | undefined][] = [
  ['example.org', 200, 'infra-backend-v1'],
  ['unknown-example.org', 404, undefined],
  ['second-example.org', 200, 'infra-backend-v2'],
];

runConformanceTest({
  shortName: 'HTTPRouteHTTPSListener',
  description: "HTTPRoute attaches to a Gateway's HTTPS listener in the same namespace",
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-https-listener.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace-with-https-listener' };
    let gwAddr: string | undefined;
    let cert: string | undefined;
    it('Gateway and HTTPRoutes must be accepted', async () => {
      const routes = [
        { namespace: ns, name: 'httproute-https-test' },
        { namespace: ns, name: 'httproute-https-test-no-hostname' },
      ];
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, routes);
      for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gwNN);
      const secret = await s.kube.get('v1', 'Secret', 'tls-validity-checks-certificate', ns);
      cert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
      if (!cert) throw new Error('missing required server certificate pem for the test');
    });
    cases.forEach(([host, statusCode, backend], i) => {
      const expected: ExpectedResponse = {
        request: { host, path: '/' },
        response: { statusCode },
        backend,
        namespace: ns,
      };
      it(testCaseName(expected, i), async () => {
        if (!gwAddr || !cert) throw new Error('no gateway address or certificate: the status case of this test failed');
        await makeTLSRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, cert, host, expected);
      });
    });
  },
});
