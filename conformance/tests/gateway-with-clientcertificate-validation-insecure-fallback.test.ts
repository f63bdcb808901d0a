// Upstream conformance test GatewayFrontendClientCertificateValidationInsecureFallback (Gateway API v1.6.1
// conformance/tests/gateway-with-clientcertificate-validation-insecure-fallback.go, GEP-91), with its manifest and
// expectations: mode AllowInsecureFallback (default and per port) sets the Gateway's InsecureFrontendValidationMode
// condition, and requests with the matching certificate, another CA's certificate or none are all served.
import { describe, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { getTLSSecret } from '../utils/certificates.ts';
import { type ExpectedResponse, makeTLSRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  gatewayAndRoutesMustBeAccepted,
  gatewayMustHaveCondition,
  httpRouteMustHaveResolvedRefsConditionsTrue,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

type Pem = { cert: string; key: string };

runConformanceTest({
  shortName: 'GatewayFrontendClientCertificateValidationInsecureFallback',
  description: "Gateway's client certificate validation set to AllowInsecureFallback allows any HTTPS traffic.",
  features: [
    'Gateway',
    'HTTPRoute',
    'GatewayFrontendClientCertificateValidation',
    'GatewayFrontendClientCertificateValidationInsecureFallback',
  ],
  manifests: ['tests/gateway-with-clientcertificate-validation-insecure-fallback.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'client-validation-insecure-fallback' };
    let host: string | undefined;
    let server: string | undefined;
    const certs: { client?: Pem; perPort?: Pem } = {};
    it('Gateway and HTTPRoutes must be accepted', async () => {
      const routes = [
        { namespace: ns, name: 'client-cert-validation-insecure-fallback-test' },
        { namespace: ns, name: 'client-cert-validation-insecure-fallback-test-no-hostname' },
      ];
      host = (await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, routes)).replace(
        /:\d+$/,
        '',
      );
      for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gwNN);
    });
    it('Validate InsecureFrontendValidationMode status condition on the Gateway', async () => {
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
        type: 'InsecureFrontendValidationMode',
        reason: 'ConfigurationChanged',
        status: 'True',
      });
      server = (await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-certificate' })).cert;
      certs.client = await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-client-certificate' });
      certs.perPort = await getTLSSecret(s.kube, {
        namespace: ns,
        name: 'tls-validity-checks-per-port-client-certificate',
      });
    });
    const cases = (listener: string, port: number, sni: string, backend: string, matching: 'client' | 'perPort') => {
      const other = matching === 'client' ? 'perPort' : 'client';
      const expected: ExpectedResponse = {
        request: { host: sni, path: '/' },
        response: { statusCode: 200 },
        backend,
        namespace: ns,
      };
      const send = async (client: Pem | undefined) => {
        if (!host || !server || !certs.client || !certs.perPort)
          throw new Error('the status cases of this test failed');
        await makeTLSRequestAndExpectEventuallyConsistentResponse(
          s.timeoutConfig,
          `${host}:${port}`,
          server,
          sni,
          expected,
          client,
        );
      };
      it(`Send request to the ${listener} listener with matching client certificate and validate that it is passing`, () =>
        send(certs[matching]));
      it(`Send request to the ${listener} listener with non-matching client certificate and validate that it is passing`, () =>
        send(certs[other]));
      it(`Send request to the ${listener} listener without client certificate and validate that it is passing`, () =>
        send(undefined));
    };
    describe('Validate default TLS configuration', () =>
      cases('first', 443, 'example.org', 'infra-backend-v1', 'client'));
    describe('Validate per port TLS configuration', () =>
      cases('second', 8443, 'second-example.org', 'infra-backend-v2', 'perPort'));
  },
});
