// Upstream conformance test TLSRouteInvalidReferenceGrant (Gateway API v1.6.1 conformance/tests/
// tlsroute-invalid-reference-grant.go), with its manifest and expectations: a backendRef in another namespace whose
// ReferenceGrant does not cover it: ResolvedRefs False/RefNotPermitted.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayAndTLSRoutesMustBeAccepted, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TLSRouteInvalidReferenceGrant',
  description:
    'A single TLSRoute in the gateway-conformance-infra namespace, with a backendRef in another namespace without valid ReferenceGrant, should have the ResolvedRefs condition set to False',
  features: ['Gateway', 'TLSRoute', 'ReferenceGrant'],
  manifests: ['tests/tlsroute-invalid-reference-grant.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'gateway-conformance-infra-test' };
    const gwNN = { namespace: ns, name: 'gateway-tlsroute-referencegrant' };
    it('Gateway and TLSRoute accepted', () =>
      gatewayAndTLSRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]));
    it('TLSRoute with BackendRef in another namespace and no ReferenceGrant covering the Service has a ResolvedRefs Condition with status False and Reason RefNotPermitted', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' },
        'TLSRoute',
      ));
  },
});
