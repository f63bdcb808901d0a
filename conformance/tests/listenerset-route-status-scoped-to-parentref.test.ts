// Upstream conformance test ListenerSetRouteStatusScopedToParentRef (Gateway API v1.6.1
// conformance/tests/listenerset-route-status-scoped-to-parentref.go), with its manifest and expectations: a route's
// status.parents holds entries for the parentRefs it declares (a Gateway-only route gets no ListenerSet entry, a
// ListenerSet-only route no Gateway entry).
import { describe, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  acceptedListenerConditions,
  GROUP,
  gatewayMustHaveAttachedListeners,
  gatewayMustHaveCondition,
  httpRouteKinds,
  httpRouteMustHaveCondition,
  listenerSetStatusMustHaveListeners,
  namespacesMustBeReady,
  routeMustHaveParents,
  routesAndParentMustBeAccepted,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'ListenerSetRouteStatusScopedToParentRef',
  description: "A Route's status.parents must contain entries only for its explicitly declared parentRefs",
  features: ['Gateway', 'ListenerSet', 'HTTPRoute'],
  manifests: ['tests/listenerset-route-status-scoped-to-parentref.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'gateway-parentref' };
    const lsNN = { namespace: ns, name: 'listenerset-parentref' };
    it('the Gateway is accepted, its ListenerSet attached with 1 route', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 1);
      await listenerSetStatusMustHaveListeners(s.kube, s.timeoutConfig, lsNN, [
        {
          name: 'listenerset-parentref-listener',
          supportedKinds: httpRouteKinds(),
          attachedRoutes: 1,
          conditions: acceptedListenerConditions(),
        },
      ]);
    });
    const parent = (kind: string, name: string) => ({
      parentRef: { group: GROUP, kind, name, namespace: ns },
      controllerName: s.controllerName,
      conditions: [{ type: 'Accepted', status: 'True' as const }],
    });
    describe('Gateway-only parentRef', () => {
      it('has an Accepted entry for the Gateway', async () => {
        const route = { namespace: ns, name: 'route-parentref-gwonly' };
        await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, route, gwNN, { type: 'Accepted', status: 'True' });
        await routeMustHaveParents(s.kube, s.timeoutConfig, route, [parent('Gateway', gwNN.name)], true);
      });
    });
    describe('ListenerSet-only parentRef', () => {
      it('has an Accepted entry for the ListenerSet', async () => {
        const route = { namespace: ns, name: 'route-parentref-lsonly' };
        await routesAndParentMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { ...lsNN, kind: 'ListenerSet' },
          [route],
        );
        await routeMustHaveParents(s.kube, s.timeoutConfig, route, [parent('ListenerSet', lsNN.name)], true);
      });
    });
  },
});
