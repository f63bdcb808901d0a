// Upstream conformance test HTTPRouteInvalidParentRefNotMatchingListenerPort (Gateway API v1.6.1
// conformance/tests/httproute-invalid-parentref-not-matching-listener-port.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveZeroRoutes,
  httpRouteMustHaveCondition,
  httpRouteMustHaveNoAcceptedParents,
  httpRouteMustHaveResolvedRefsConditionsTrue,
} from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidParentRefNotMatchingListenerPort',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should set the Accepted status to False with reason NoMatchingParent when attempting to bind to a Gateway that does not have a matching ListenerPort.',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteDestinationPortMatching'],
  manifests: ['tests/httproute-invalid-parentref-not-matching-listener-port.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'httproute-listener-not-matching-route-port' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    // Upstream checks ResolvedRefs before its subtests; here it is the first case.
    it('HTTPRoute must have ResolvedRefs True', () =>
      httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN));
    it('HTTPRoute with no matching port in ParentRef has an Accepted Condition with status False and Reason NoMatchingParent', () =>
      httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'NoMatchingParent',
      }));
    it('Route should not have Parents accepted in status', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, routeNN));
    it('Gateway should have 0 Routes attached', () => gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, gwNN));
  },
});
