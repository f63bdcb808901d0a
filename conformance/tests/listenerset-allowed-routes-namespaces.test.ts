// Upstream conformance test ListenerSetAllowedRoutesNamespaces (Gateway API v1.6.1
// conformance/tests/listenerset-allowed-routes-namespaces.go), with its manifest and expectations: the
// allowedRoutes.namespaces of a ListenerSet's listeners (All, Same, Selector), Same meaning the ListenerSet's
// namespace, not the Gateway's.
import { describe, it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
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

const ok = (host: string, path: string, backend: string): ExpectedResponse => ({
  request: { host, path },
  backend,
  namespace: ns,
});
const notFound = (host: string, path: string): ExpectedResponse => ({
  request: { host, path },
  response: { statusCode: 404 },
});

runConformanceTest({
  shortName: 'ListenerSetAllowedRoutesNamespaces',
  description: 'ListenerSet listeners allow routes from the specified namespace',
  features: ['Gateway', 'ListenerSet', 'HTTPRoute', 'ReferenceGrant'],
  manifests: ['tests/listenerset-allowed-routes-namespaces.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'gateway-with-listener-sets-test-allowed-routes' };
    let addr: string | undefined;
    it('the Gateway is accepted with 2 attached ListenerSets', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      addr = await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: ['gateway-listener'] });
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 2);
    });

    describe('Same-namespace ListenerSet', () => {
      const lsNN = { namespace: ns, name: 'listenerset-test-allowed-routes-namespaces' };
      it('routes and ListenerSet accepted, listeners as expected', async () => {
        const routes = [
          { name: 'route-in-same-namespace', namespace: ns },
          { name: 'route-in-selected-namespace', namespace: 'gateway-api-routes-allowed-ns' },
          { name: 'route-not-in-selected-namespace', namespace: 'gateway-api-routes-not-allowed-ns' },
        ];
        await routesAndParentMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { ...lsNN, kind: 'ListenerSet' },
          routes,
        );
        const listener = (name: string, attachedRoutes: number) => ({
          name,
          supportedKinds: httpRouteKinds(),
          attachedRoutes,
          conditions: acceptedListenerConditions(),
        });
        await listenerSetStatusMustHaveListeners(s.kube, s.timeoutConfig, lsNN, [
          listener('listener-set-listener-allowed-routes-all', 3),
          listener('listener-set-listener-allowed-routes-same', 1),
          listener('listener-set-listener-allowed-routes-selector', 1),
        ]);
      });
      const all = 'listener-set-listener-allowed-routes-all.com';
      const same = 'listener-set-listener-allowed-routes-same.com';
      const selector = 'listener-set-listener-allowed-routes-selector.com';
      httpCases(s, () => addr, [
        ok(all, '/route-in-same-namespace', 'infra-backend-v1'),
        ok(all, '/route-in-selected-namespace', 'infra-backend-v2'),
        ok(all, '/route-not-in-selected-namespace', 'infra-backend-v3'),
        ok(same, '/route-in-same-namespace', 'infra-backend-v1'),
        notFound(same, '/route-in-selected-namespace'),
        notFound(same, '/route-not-in-selected-namespace'),
        notFound(selector, '/route-in-same-namespace'),
        ok(selector, '/route-in-selected-namespace', 'infra-backend-v2'),
        notFound(selector, '/route-not-in-selected-namespace'),
      ]);
    });

    describe('Cross-namespace ListenerSet', () => {
      const lsNN = { namespace: 'gateway-api-ls-cross-ns', name: 'listenerset-test-allowed-routes-cross-ns' };
      it('only the route in the ListenerSet namespace attaches', async () => {
        await routesAndParentMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { ...lsNN, kind: 'ListenerSet' },
          [{ name: 'route-in-listenerset-namespace', namespace: lsNN.namespace }],
        );
        await httpRouteMustHaveCondition(
          s.kube,
          s.timeoutConfig,
          { name: 'route-in-gateway-namespace', namespace: ns },
          lsNN,
          { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners' },
        );
        await listenerSetStatusMustHaveListeners(s.kube, s.timeoutConfig, lsNN, [
          {
            name: 'listener-set-listener-allowed-routes-cross-ns-same',
            supportedKinds: httpRouteKinds(),
            attachedRoutes: 1,
            conditions: acceptedListenerConditions(),
          },
        ]);
      });
      const host = 'listener-set-listener-allowed-routes-cross-ns-same.com';
      httpCases(s, () => addr, [
        ok(host, '/route-in-listenerset-namespace', 'infra-backend-v1'),
        notFound(host, '/route-in-gateway-namespace'),
      ]);
    });
  },
});
