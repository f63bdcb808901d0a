// Upstream conformance test BackendTLSPolicyInvalidKind (Gateway API v1.6.1
// conformance/tests/backendtlspolicy-invalid-kind.go), with its manifest and expectations: a caCertificateRef of an
// unsupported kind makes the policy Accepted=False/NoValidCACertificate and ResolvedRefs=False/InvalidKind, and
// requests to its Service get a 5xx.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  backendTLSPolicyMustHaveCondition,
  gatewayAndRoutesMustBeAccepted,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'BackendTLSPolicyInvalidKind',
  description:
    'A BackendTLSPolicy that specifies a single CACertificateRef with an invalid kind should have the Accepted and ResolvedRefs status condition set False with appropriate reasons, and HTTP requests to a backend targeted by this policy should fail with a 5xx response.',
  features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/backendtlspolicy-invalid-kind.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace' };
    const policyNN = { namespace: ns, name: 'invalid-kind' };
    let gwAddr: string | undefined;
    it('Gateway and HTTPRoute must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const routeNN = { namespace: ns, name: 'backendtlspolicy-invalid-kind-test' };
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
    });
    it('BackendTLSPolicy with a single invalid CACertificateRef has a Accepted Condition with status False and Reason NoValidCACertificate', async () => {
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policyNN, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'NoValidCACertificate',
      });
    });
    it('BackendTLSPolicy with a single invalid CACertificateRef has a ResolvedRefs Condition with status False and Reason InvalidKind', async () => {
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policyNN, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'InvalidKind',
      });
    });
    it('HTTP Request to backend targeted by an invalid BackendTLSPolicy receive a 5xx', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        namespace: ns,
        request: { host: 'abc.example.com', path: '/backendtlspolicy-invalid-kind' },
        response: { statusCodes: [500, 502, 503] },
      });
    });
  },
});
