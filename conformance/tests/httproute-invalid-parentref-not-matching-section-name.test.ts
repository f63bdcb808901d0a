// Upstream conformance test HTTPRouteInvalidParentRefNotMatchingSectionName (Gateway API v1.6.1
// conformance/tests/httproute-invalid-parentref-not-matching-section-name.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveZeroRoutes,
  httpRouteMustHaveCondition,
  httpRouteMustHaveNoAcceptedParents,
} from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidParentRefNotMatchingSectionName',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should set the Accepted status to False with reason NoMatchingParent when attempting to bind to a Gateway that does not have a matching SectionName.',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-invalid-parentref-not-matching-section-name.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'httproute-listener-not-matching-section-name' };
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    it('HTTPRoute with no matching sectionName in ParentRef has an Accepted Condition with status False and Reason NoMatchingParent', () =>
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
