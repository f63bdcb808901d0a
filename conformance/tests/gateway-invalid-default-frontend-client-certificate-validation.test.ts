// Upstream conformance test GatewayFrontendInvalidDefaultClientCertificateValidation (Gateway API v1.6.1
// conformance/tests/gateway-invalid-default-frontend-client-certificate-validation.go, GEP-91), with its manifest
// and expectations: an invalid default validation (a ConfigMap that does not exist) takes the HTTPS listener down
// (ResolvedRefs False/InvalidCACertificateRef, Accepted False/NoValidCACertificate, its requests fail) and leaves the
// HTTP listener serving (a per-port validation for port 80 applies to HTTPS listeners only).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { getTLSSecret } from '../utils/certificates.ts';
import {
  type ExpectedResponse,
  makeRequestAndExpectEventuallyConsistentResponse,
  makeTLSRequestAndExpectFailureResponse,
} from '../utils/http.ts';
import { waitForGatewayAddress } from '../utils/kubernetes.ts';
import { gatewayListenerMustHaveConditions } from '../utils/listener-conditions.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayFrontendInvalidDefaultClientCertificateValidation',
  description: "Invalid Gateway's default Client Certificate Validation Config should only affect HTTPS traffic",
  features: ['Gateway', 'HTTPRoute', 'GatewayFrontendClientCertificateValidation'],
  manifests: ['tests/gateway-invalid-default-frontend-client-certificate-validation.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'invalid-default-client-validation-config' };
    let host: string | undefined;
    let server: string | undefined;
    it('Gateway address assigned', async () => {
      host = (await waitForGatewayAddress(s.kube, s.timeoutConfig, gwNN)).replace(/:\d+$/, '');
      server = (await getTLSSecret(s.kube, { namespace: ns, name: 'tls-validity-checks-certificate' })).cert;
    });
    it('Validate tls configuration does not impact HTTP listener', async () => {
      if (!host) throw new Error('no gateway address: the first case of this test failed');
      await gatewayListenerMustHaveConditions(s.kube, s.timeoutConfig, gwNN, 'http', [
        { type: 'ResolvedRefs', status: 'True', reason: '' },
        { type: 'Accepted', status: 'True', reason: '' },
        { type: 'Programmed', status: 'True', reason: '' },
      ]);
      const expected: ExpectedResponse = {
        request: { host: 'example.org', path: '/' },
        response: { statusCode: 200 },
        backend: 'infra-backend-v1',
        namespace: ns,
      };
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, `${host}:80`, expected);
    });
    it('Validate that invalid default configuration is impacting HTTPS listener', async () => {
      if (!host || !server) throw new Error('no gateway address: the first case of this test failed');
      await gatewayListenerMustHaveConditions(s.kube, s.timeoutConfig, gwNN, 'https', [
        { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCACertificateRef' },
        { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' },
        { type: 'Programmed', status: 'False', reason: '' },
      ]);
      const failure: ExpectedResponse = { request: { host: 'example.org', path: '/' }, namespace: ns };
      await makeTLSRequestAndExpectFailureResponse(s.timeoutConfig, `${host}:443`, server, 'example.org', failure);
    });
  },
});
