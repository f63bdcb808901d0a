// Upstream conformance test GatewayFrontendClientCertificateValidation (Gateway API v1.6.1
// conformance/tests/gateway-with-clientcertificate-validation.go, GEP-91), with its manifest and expectations: the
// Gateway's default client certificate validation on port 443 and its per-port one on 8443; on each port a request
// presenting the certificate its CA signed is served, one presenting the other port's certificate fails.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { getTLSSecret } from '../utils/certificates.ts';
import {
  type ExpectedResponse,
  makeTLSRequestAndExpectEventuallyConsistentResponse,
  makeTLSRequestAndExpectFailureResponse,
} from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayFrontendClientCertificateValidation',
  description: "Gateway's client certificate validation config should be used for HTTPS traffic",
  features: ['Gateway', 'HTTPRoute', 'GatewayFrontendClientCertificateValidation'],
  manifests: ['tests/gateway-with-clientcertificate-validation.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'client-validation-default' };
    let host: string | undefined;
    let server: string | undefined;
    let client: { cert: string; key: string } | undefined;
    let perPort: { cert: string; key: string } | undefined;
    it('Gateway and HTTPRoutes must be accepted', async () => {
      const routes = [
        { namespace: ns, name: 'client-certificate-validation-https-test' },
        { namespace: ns, name: 'client-certificate-validation-https-test-no-hostname' },
      ];
      // The address without port: the two HTTPS listeners have their own ports.
      host = (await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, routes)).replace(
        /:\d+$/,
        '',
      );
      for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gwNN);
      server = (await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-certificate' })).cert;
      client = await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-client-certificate' });
      perPort = await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-per-port-client-certificate' });
    });
    const ready = () => {
      if (!host || !server || !client || !perPort) throw new Error('the status case of this test failed');
      return { host, server, client, perPort };
    };
    it('Validate default configuration', async () => {
      const r = ready();
      const addr = `${r.host}:443`;
      const success: ExpectedResponse = {
        request: { host: 'example.org', path: '/' },
        response: { statusCode: 200 },
        backend: 'infra-backend-v1',
        namespace: ns,
      };
      await makeTLSRequestAndExpectEventuallyConsistentResponse(
        s.timeoutConfig,
        addr,
        r.server,
        'example.org',
        success,
        r.client,
      );
      const failure: ExpectedResponse = { request: { host: 'example.org', path: '/' }, namespace: ns };
      await makeTLSRequestAndExpectFailureResponse(s.timeoutConfig, addr, r.server, 'example.org', failure, r.perPort);
    });
    it('Validate per port configuration', async () => {
      const r = ready();
      const addr = `${r.host}:8443`;
      const success: ExpectedResponse = {
        request: { host: 'second-example.org', path: '/' },
        response: { statusCode: 200 },
        backend: 'infra-backend-v2',
        namespace: ns,
      };
      await makeTLSRequestAndExpectEventuallyConsistentResponse(
        s.timeoutConfig,
        addr,
        r.server,
        'second-example.org',
        success,
        r.perPort,
      );
      const failure: ExpectedResponse = { request: { host: 'second-example.org', path: '/' }, namespace: ns };
      await makeTLSRequestAndExpectFailureResponse(
        s.timeoutConfig,
        addr,
        r.server,
        'second-example.org',
        failure,
        r.client,
      );
    });
  },
});
