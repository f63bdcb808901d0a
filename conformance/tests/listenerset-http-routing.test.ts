// Upstream conformance test ListenerSetHTTPRouting (Gateway API v1.6.1 conformance/tests/listenerset-http-routing.go),
// with its manifest and expectations: routes attached to the Gateway, to ListenerSets, to one listener of either by
// sectionName, and to all of them, each served only on the listeners it attaches to.
import { it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import {
  acceptedListenerConditions,
  gatewayAndRoutesMustBeAccepted,
  gatewayMustHaveAttachedListeners,
  httpRouteKinds,
  listenerSetStatusMustHaveListeners,
  namespacesMustBeReady,
  routesAndParentMustBeAccepted,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const HOSTS = [
  'gateway-listener-1.com',
  'gateway-listener-2.com',
  'listener-set-http-routing-1-listener-1.com',
  'listener-set-http-routing-1-listener-2.com',
  'listener-set-http-routing-2-listener-1.com',
  'listener-set-http-routing-2-listener-2.com',
];

/** Upstream's table: for each path, the hosts (by index in HOSTS) that serve it from `backend`; the others 404. */
const TABLE: [string, number[], string][] = [
  ['/route', [0, 1, 2, 3, 4, 5], 'infra-backend-v1'],
  ['/gateway-route', [0, 1], 'infra-backend-v2'],
  ['/gateway-section-route', [0], 'infra-backend-v3'],
  ['/listener-set-http-routing-1-route', [2, 3], 'infra-backend-v2'],
  ['/listener-set-http-routing-1-section-route', [2], 'infra-backend-v3'],
  ['/listener-set-http-routing-2-route', [4, 5], 'infra-backend-v2'],
];

const cases: ExpectedResponse[] = TABLE.flatMap(([path, served, backend]) =>
  HOSTS.map((host, i) =>
    served.includes(i)
      ? { request: { host, path }, backend, namespace: ns }
      : { request: { host, path }, response: { statusCode: 404 } },
  ),
);

runConformanceTest({
  shortName: 'ListenerSetHTTPRouting',
  description: 'HTTP Routing works as expected with ListenerSets',
  features: ['Gateway', 'ListenerSet', 'HTTPRoute'],
  manifests: ['tests/listenerset-http-routing.yaml'],
  test(s) {
    let addr: string | undefined;
    it('the Gateway, its ListenerSets and their routes are accepted', async () => {
      const tc = s.timeoutConfig;
      await namespacesMustBeReady(s.kube, tc, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-with-listener-sets-http-routing' };
      addr = await gatewayAndRoutesMustBeAccepted(
        s.kube,
        tc,
        s.controllerName,
        { ...gwNN, listenerNames: ['gateway-listener'] },
        [
          { namespace: ns, name: 'attaches-to-all-listeners' },
          { namespace: ns, name: 'gateway-route' },
          { namespace: ns, name: 'gateway-section-route' },
        ],
      );
      await gatewayMustHaveAttachedListeners(s.kube, tc, gwNN, 2);
      const listener = (name: string, attachedRoutes: number) => ({
        name,
        supportedKinds: httpRouteKinds(),
        attachedRoutes,
        conditions: acceptedListenerConditions(),
      });
      const ls1 = { namespace: ns, name: 'listener-set-http-routing-1' };
      await routesAndParentMustBeAccepted(s.kube, tc, s.controllerName, { ...ls1, kind: 'ListenerSet' }, [
        { namespace: ns, name: 'attaches-to-all-listeners' },
        { namespace: ns, name: 'listener-set-http-routing-1-route' },
        { namespace: ns, name: 'listener-set-http-routing-1-section-route' },
      ]);
      await listenerSetStatusMustHaveListeners(s.kube, tc, ls1, [
        listener('listener-set-http-routing-1-listener-1', 3),
        listener('listener-set-http-routing-1-listener-2', 2),
      ]);
      const ls2 = { namespace: ns, name: 'listener-set-http-routing-2' };
      await routesAndParentMustBeAccepted(s.kube, tc, s.controllerName, { ...ls2, kind: 'ListenerSet' }, [
        { namespace: ns, name: 'attaches-to-all-listeners' },
        { namespace: ns, name: 'listener-set-http-routing-2-route' },
      ]);
      await listenerSetStatusMustHaveListeners(s.kube, tc, ls2, [
        listener('listener-set-http-routing-2-listener-1', 2),
        listener('listener-set-http-routing-2-listener-2', 2),
      ]);
    });
    httpCases(s, () => addr, cases);
  },
});
