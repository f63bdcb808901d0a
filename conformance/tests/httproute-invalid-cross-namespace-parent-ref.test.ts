// Upstream conformance test HTTPRouteInvalidCrossNamespaceParentRef (Gateway API v1.6.1
// conformance/tests/httproute-invalid-cross-namespace-parent-ref.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveZeroRoutes,
  httpRouteMustHaveCondition,
  httpRouteMustHaveNoAcceptedParents,
  httpRouteMustHaveResolvedRefsConditionsTrue,
} from '../utils/kubernetes.ts';
import { INFRA_NS, WEB_BACKEND_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteInvalidCrossNamespaceParentRef',
  description:
    'A single HTTPRoute in the gateway-conformance-web-backend namespace should fail to attach to a Gateway in another namespace that it is not allowed to',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-invalid-cross-namespace-parent-ref.yaml'],
  test(s) {
    const gwNN = { namespace: INFRA_NS, name: 'same-namespace' };
    const routeNN = { namespace: WEB_BACKEND_NS, name: 'invalid-cross-namespace-parent-ref' };
    it('HTTPRoute must have ResolvedRefs True', () =>
      httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN));
    it('HTTPRoute should have an Accepted: false condition with reason NotAllowedByListeners', () =>
      httpRouteMustHaveCondition(s.kube, s.timeoutConfig, routeNN, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'NotAllowedByListeners',
      }));
    it('Route should not have Parents set in status', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, routeNN));
    it('Gateway should have 0 Routes attached', () => gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, gwNN));
  },
});
