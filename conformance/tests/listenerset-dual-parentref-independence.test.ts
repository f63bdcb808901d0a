// Upstream conformance test ListenerSetDualParentRefIndependence (Gateway API v1.6.1
// conformance/tests/listenerset-dual-parentref-independence.go), with its manifest and expectations: a route naming
// both a Gateway and a ListenerSet of it gets one Accepted condition per parentRef, each evaluated on its own.
import { describe, it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import {
  acceptedListenerConditions,
  gatewayMustHaveAttachedListeners,
  gatewayMustHaveCondition,
  httpRouteKinds,
  httpRouteMustHaveCondition,
  listenerSetStatusMustHaveListeners,
  namespacesMustBeReady,
  routesAndParentMustBeAccepted,
  waitForGatewayAddress,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'ListenerSetDualParentRefIndependence',
  description:
    'A Route with both Gateway and ListenerSet parentRefs has independently evaluated Accepted conditions for each parentRef',
  features: ['Gateway', 'ListenerSet', 'HTTPRoute'],
  manifests: ['tests/listenerset-dual-parentref-independence.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'gateway-dual-parentref' };
    const lsNN = { namespace: ns, name: 'ls-dual-parentref' };
    let addr: string | undefined;
    it('the Gateway is accepted, its ListenerSet attached with 2 routes', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      addr = await waitForGatewayAddress(s.kube, s.timeoutConfig, {
        ...gwNN,
        listenerNames: ['gw-dual-parentref-listener'],
      });
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 1);
      await listenerSetStatusMustHaveListeners(s.kube, s.timeoutConfig, lsNN, [
        {
          name: 'ls-dual-parentref-listener',
          supportedKinds: httpRouteKinds(),
          attachedRoutes: 2,
          conditions: acceptedListenerConditions(),
        },
      ]);
    });

    describe('Both parentRefs are Accepted', () => {
      it('Accepted for the Gateway and for the ListenerSet', async () => {
        const route = { namespace: ns, name: 'route-dual-parentref-both' };
        await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, route, gwNN, { type: 'Accepted', status: 'True' });
        await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, route, lsNN, { type: 'Accepted', status: 'True' });
      });
      httpCases(s, () => addr, [
        { request: { host: 'gw-dual.com', path: '/dualboth' }, backend: 'infra-backend-v1', namespace: ns },
        { request: { host: 'ls-dual.com', path: '/dualboth' }, backend: 'infra-backend-v1', namespace: ns },
      ]);
    });

    describe('One of two parentRefs is Accepted', () => {
      it('NoMatchingParent for the Gateway, Accepted for the ListenerSet', async () => {
        const route = { namespace: ns, name: 'route-dual-parentref-one' };
        await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, route, gwNN, {
          type: 'Accepted',
          status: 'False',
          reason: 'NoMatchingParent',
        });
        await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, route, lsNN, { type: 'Accepted', status: 'True' });
        await routesAndParentMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { ...lsNN, kind: 'ListenerSet' },
          [route],
        );
      });
      httpCases(s, () => addr, [
        { request: { host: 'ls-dual.com', path: '/dualone' }, backend: 'infra-backend-v2', namespace: ns },
        { request: { host: 'gw-dual.com', path: '/dualone' }, response: { statusCode: 404 } },
      ]);
    });
  },
});
