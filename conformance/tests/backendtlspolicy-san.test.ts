// Upstream conformance test BackendTLSPolicySANValidation (Gateway API v1.6.1 conformance/tests/backendtlspolicy-san.go),
// with its manifest and expectations: subjectAltNames (Hostname, URI, several) the backend's certificate carries let
// requests through; ones it does not carry make them fail.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse, makeRequestAndExpectFailure } from '../utils/http.ts';
import {
  backendTLSPolicyMustHaveCondition,
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const serverStr = 'abc.example.com';
const cases: [string, string, boolean][] = [
  ['HTTP request sent to Service with valid BackendTLSPolicy containing dns SAN should succeed', 'san-dns', true],
  [
    'HTTP request sent to Service targeted by BackendTLSPolicy with mismatched dns SAN should return an HTTP error',
    'san-dns-mismatch',
    false,
  ],
  ['HTTP request sent to Service with valid BackendTLSPolicy containing uri SAN should succeed', 'san-uri', true],
  [
    'HTTP request sent to Service targeted by BackendTLSPolicy with mismatched uri SAN should return an HTTP error',
    'san-uri-mismatch',
    false,
  ],
  [
    'HTTP request sent to Service with valid BackendTLSPolicy containing multi SAN should succeed',
    'multiple-sans',
    true,
  ],
  [
    'HTTP request sent to Service targeted by BackendTLSPolicy with mismatched multi SAN should return an HTTP error',
    'multiple-mismatch-sans',
    false,
  ],
];

runConformanceTest({
  shortName: 'BackendTLSPolicySANValidation',
  description: 'BackendTLSPolicySANValidation extend BackendTLSPolicy with SubjectAltNames validation',
  features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy', 'BackendTLSPolicySANValidation'],
  manifests: ['tests/backendtlspolicy-san.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace' };
    let gwAddr: string | undefined;
    it('Gateway and HTTPRoute must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const routeNN = { namespace: ns, name: 'backendtlspolicy-san-test' };
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
    });
    for (const [name, policy, succeeds] of cases) {
      it(name, async () => {
        if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
        await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, { namespace: ns, name: policy }, gwNN, {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
        });
        const e = { namespace: ns, request: { host: serverStr, path: `/backendtlspolicy-${policy}`, sni: serverStr } };
        if (succeeds)
          await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, {
            ...e,
            response: { statusCodes: [200] },
          });
        else await makeRequestAndExpectFailure(s.timeoutConfig, gwAddr, e);
      });
    }
  },
});
