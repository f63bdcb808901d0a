// Upstream conformance test GatewayTLSBackendClientCertificate (Gateway API v1.6.1
// conformance/tests/gateway-tls-backend-client-certificate.go), with its manifest and expectations: a Gateway whose
// spec.tls.backend.clientCertificateRef names a Secret presents that certificate to a backend reached with TLS
// (BackendTLSPolicy), which checks it (echo-basic's TLS_CLIENT_CACERTS); the Gateway reads ResolvedRefs True.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  backendTLSPolicyMustHaveCondition,
  gatewayAndRoutesMustBeAccepted,
  gatewayMustHaveCondition,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayTLSBackendClientCertificate',
  description:
    'A Gateway with a client certificate configured should present the certificate when connecting to a backend using TLS.',
  features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/gateway-tls-backend-client-certificate.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'gateway-tls-backend-client-certificate' };
    let gwAddr: string | undefined;
    it('Gateway, HTTPRoute and BackendTLSPolicy must be accepted, the Gateway ResolvedRefs', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const routeNN = { namespace: ns, name: 'gateway-tls-backend-client-certificate' };
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
      await backendTLSPolicyMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        { namespace: ns, name: 'gateway-tls-backend-client-certificate-test' },
        gwNN,
        { type: 'Accepted', status: 'True', reason: 'Accepted' },
      );
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
      });
    });
    it('HTTP request sent to Service using TLS should succeed and the configured client certificate should be presented.', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      const secret = await s.kube.get('v1', 'Secret', 'tls-checks-client-certificate', ns);
      const clientCert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
      if (!clientCert) throw new Error('missing required server certificate pem for the test');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        namespace: ns,
        request: { path: '/', host: 'abc.example.com', sni: 'abc.example.com', clientCert },
        response: { statusCodes: [200] },
      });
    });
  },
});
