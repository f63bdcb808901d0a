// Upstream conformance test HTTPRouteInvalidParentRefSectionNameNotMatchingPort (Gateway API v1.6.1
// conformance/tests/httproute-invalid-parentref-section-name-not-matching-port.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveZeroRoutes,
  httpRouteMustHaveCondition,
  httpRouteMustHaveNoAcceptedParents,
} from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidParentRefSectionNameNotMatchingPort',
  description:
    'A single HTTPRoute in the gateway-conformance-infra namespace should set the Accepted status to False with reason NoMatchingParent when attempting to bind to a Gateway that SectionName does not match Port value.',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteParentRefPort'],
  manifests: ['tests/httproute-invalid-parentref-section-name-not-matching-port.yaml'],
  test(s) {
    const routeNN = { namespace: INFRA_NS, name: 'httproute-listener-section-name-not-matching-port' };
    const gwNN = { namespace: INFRA_NS, name: 'gateway-with-one-not-matching-port-and-section-name-route' };
    it('HTTPRoute with sectionName does not match Port in ParentRef has an Accepted Condition with status False and Reason NoMatchingParent', () =>
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
