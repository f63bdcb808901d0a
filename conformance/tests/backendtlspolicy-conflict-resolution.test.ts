// Upstream conformance test BackendTLSPolicyConflictResolution (Gateway API v1.6.1
// conformance/tests/backendtlspolicy-conflict-resolution.go), with its manifest and expectations: of two policies on
// the same Service (and section), the older is accepted and the other Accepted=False/Conflicted (GEP-713); a policy
// on a port and one on the whole Service do not conflict; the backend sees the winning policy's hostname as SNI.
import { describe, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  backendTLSPolicyMustHaveCondition,
  type Cond,
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const accepted: Cond = { type: 'Accepted', status: 'True', reason: 'Accepted' };
const conflicted: Cond = { type: 'Accepted', status: 'False', reason: 'Conflicted' };

runConformanceTest({
  shortName: 'BackendTLSPolicyConflictResolution',
  description:
    'Verifies that when multiple BackendTLSPolicies target the same Service, only one policy is accepted while conflicting policies are rejected, and traffic continues to route successfully.',
  features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/backendtlspolicy-conflict-resolution.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('Gateway and HTTPRoute must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const routeNN = { namespace: ns, name: 'backendtlspolicy-conflict-resolution' };
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
    });
    const must = (name: string, c: Cond) =>
      backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, { namespace: ns, name }, gwNN, c);
    const request = (path: string, sni: string) => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      return makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
        namespace: ns,
        request: { host: 'abc.example.com', path, sni },
        response: { statusCode: 200 },
      });
    };

    for (const [what, part] of [
      ['without a section name', 'without-section-name'],
      ['with the same section name', 'with-section-name'],
    ]) {
      describe(`Conflicting BackendTLSPolicies targeting the same Service ${what}`, () => {
        it('First BackendTLSPolicy should be accepted', () => must(`conflicted-${part}-1`, accepted));
        it('Second BackendTLSPolicy should have a false Accepted condition with reason Conflicted ', () =>
          must(`conflicted-${part}-2`, conflicted));
        it('HTTP request sent to Service using the accepted BackendTLSPolicy should succeed', () =>
          request(`/backendtlspolicy-conflicted-${part}`, 'other.example.com'));
      });
    }

    describe('BackendTLSPolicies targeting the same Service with and without a section name', () => {
      it('BackendTLSPolicy with section name should be accepted', () =>
        must('not-conflicted-with-section-name', accepted));
      it('BackendTLSPolicy without section name should be accepted', () =>
        must('not-conflicted-without-section-name', accepted));
      it('HTTP request sent to Service using the BackendTLSPolicy with section name should succeed', () =>
        request('/backendtlspolicy-not-conflicted-with-section-name', 'other.example.com'));
      it('HTTP request sent to Service using the BackendTLSPolicy without section name should succeed', () =>
        request('/backendtlspolicy-not-conflicted-without-section-name', 'abc.example.com'));
    });
  },
});
