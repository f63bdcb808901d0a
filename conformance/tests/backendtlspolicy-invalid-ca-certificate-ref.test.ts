// Upstream conformance test BackendTLSPolicyInvalidCACertificateRef (Gateway API v1.6.1
// conformance/tests/backendtlspolicy-invalid-ca-certificate-ref.go), with its manifest and expectations: a policy whose
// only caCertificateRef names a missing ConfigMap, or one without ca.crt, is Accepted=False/NoValidCACertificate and
// ResolvedRefs=False/InvalidCACertificateRef, and requests to its Service get a 5xx.
import { describe, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  backendTLSPolicyMustHaveCondition,
  gatewayAndRoutesMustBeAccepted,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'BackendTLSPolicyInvalidCACertificateRef',
  description:
    'A BackendTLSPolicy that specifies a single invalid CACertificateRef should have the Accepted and ResolvedRefs status condition set False with appropriate reasons, and HTTP requests to a backend targeted by this policy should fail with a 5xx response.',
  features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/backendtlspolicy-invalid-ca-certificate-ref.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('Gateway and HTTPRoute must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const routeNN = { namespace: ns, name: 'backendtlspolicy-invalid-ca-certificate-ref' };
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
    });
    for (const name of ['nonexistent-ca-certificate-ref', 'malformed-ca-certificate-ref']) {
      const policyNN = { namespace: ns, name };
      describe(`BackendTLSPolicy_${name}`, () => {
        it('BackendTLSPolicy with a single invalid CACertificateRef has a Accepted Condition with status False and Reason NoValidCACertificate', async () => {
          await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policyNN, gwNN, {
            type: 'Accepted',
            status: 'False',
            reason: 'NoValidCACertificate',
          });
        });
        it('BackendTLSPolicy with a single invalid CACertificateRef has a ResolvedRefs Condition with status False and Reason InvalidCACertificateRef', async () => {
          await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policyNN, gwNN, {
            type: 'ResolvedRefs',
            status: 'False',
            reason: 'InvalidCACertificateRef',
          });
        });
        it('HTTP Request to backend targeted by an invalid BackendTLSPolicy receive a 5xx', async () => {
          if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
          await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
            namespace: ns,
            request: { host: 'abc.example.com', path: `/backendtlspolicy-${name}` },
            response: { statusCodes: [500, 502, 503] },
          });
        });
      });
    }
  },
});
