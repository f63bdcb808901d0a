// Upstream conformance test HTTPRouteRedirectPortAndScheme (Gateway API v1.6.1
// conformance/tests/httproute-redirect-port-and-scheme.go), with its manifest and expectations: redirects from an HTTP
// listener on 80, one on 8080 and the HTTPS listener on 443 (upstream checks all three Gateways before any request).
import { it } from 'vitest';
import { redirectCase, runConformanceTest } from '../support/run.ts';
import {
  makeRequestAndExpectEventuallyConsistentResponse,
  makeTLSRequestAndExpectEventuallyConsistentResponse,
  testCaseName,
} from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const host = 'example.org';
const on80 = [
  redirectCase('/scheme-nil-and-port-nil', 302, { scheme: 'http', host }, ns),
  redirectCase('/scheme-nil-and-port-80', 302, { scheme: 'http', host }, ns),
  redirectCase('/scheme-nil-and-port-8080', 302, { scheme: 'http', port: '8080', host }, ns),
  redirectCase('/scheme-https-and-port-nil', 302, { scheme: 'https', host }, ns),
  redirectCase('/scheme-https-and-port-443', 302, { scheme: 'https', host }, ns),
  redirectCase('/scheme-https-and-port-8443', 302, { scheme: 'https', port: '8443', host }, ns),
];
const on8080 = [
  redirectCase('/scheme-nil-and-port-nil', 302, { scheme: 'http', port: '8080', host }, ns),
  redirectCase('/scheme-nil-and-port-80', 302, { scheme: 'http', host }, ns),
  redirectCase('/scheme-https-and-port-nil', 302, { scheme: 'https', host }, ns),
];
const on443 = [
  ['/scheme-nil-and-port-nil', { scheme: 'https', host }],
  ['/scheme-nil-and-port-443', { scheme: 'https', host }],
  ['/scheme-nil-and-port-8443', { scheme: 'https', port: '8443', host }],
  ['/scheme-http-and-port-nil', { scheme: 'http', host }],
  ['/scheme-http-and-port-80', { scheme: 'http', host }],
  ['/scheme-http-and-port-8080', { scheme: 'http', port: '8080', host }],
].map(([path, r]) => {
  const c = redirectCase(path as string, 302, r as object, ns);
  return { ...c, request: { ...c.request, host } };
});

runConformanceTest({
  shortName: 'HTTPRouteRedirectPortAndScheme',
  description: 'An HTTPRoute with port and scheme redirect filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect', 'GatewayPort8080'],
  manifests: ['tests/httproute-redirect-port-and-scheme.yaml'],
  test(s) {
    const addrs: Record<string, string> = {};
    let cert = '';
    it('Gateways and HTTPRoutes must be accepted', async () => {
      for (const [port, gw] of [
        ['80', 'same-namespace'],
        ['8080', 'same-namespace-with-http-listener-on-8080'],
        ['443', 'same-namespace-with-https-listener'],
      ]) {
        const gwNN = { namespace: ns, name: gw };
        const route = { namespace: ns, name: `http-route-for-listener-on-port-${port}` };
        addrs[port] = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [route]);
        await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, route, gwNN);
      }
      const secret = await s.kube.get('v1', 'Secret', 'tls-validity-checks-certificate', ns);
      cert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
      if (!cert) throw new Error('missing required server certificate pem for the test');
    });
    const addr = (port: string) => {
      if (!addrs[port]) throw new Error('no gateway address: the status case of this test failed');
      return addrs[port];
    };
    for (const [port, cases] of [
      ['80', on80],
      ['8080', on8080],
    ] as const) {
      cases.forEach((tc, i) => {
        it.concurrent(`http-listener-on-${port}/${testCaseName(tc, i)}`, async () => {
          await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr(port), tc);
        });
      });
    }
    on443.forEach((tc, i) => {
      it.concurrent(`https-listener-on-443/${testCaseName(tc, i)}`, async () => {
        await makeTLSRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr('443'), cert, host, tc);
      });
    });
  },
});
