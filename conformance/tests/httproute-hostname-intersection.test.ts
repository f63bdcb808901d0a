// Upstream conformance test HTTPRouteHostnameIntersection (Gateway API v1.6.1
// conformance/tests/httproute-hostname-intersection.go), with its manifest and expectations: its four subtests in
// upstream's order (routes that intersect, routes that do not, AttachedRoutes, a listener without hostname).
import { describe, it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import {
  GROUP,
  gatewayAndRoutesMustBeAccepted,
  gatewayStatusMustHaveListeners,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  namespacesMustBeReady,
  routeMustHaveParents,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const v1 = 'infra-backend-v1';
const v2 = 'infra-backend-v2';
const v3 = 'infra-backend-v3';
const to = (host: string, path: string, backend: string): ExpectedResponse => ({
  request: { host, path },
  backend,
  namespace: ns,
});
const notFound = (host: string, path: string): ExpectedResponse => ({
  request: { host, path },
  response: { statusCode: 404 },
});

runConformanceTest({
  shortName: 'HTTPRouteHostnameIntersection',
  description:
    'HTTPRoutes should attach to listeners only if they have intersecting hostnames, and should accept requests only for the intersecting hostnames',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-hostname-intersection.yaml'],
  test(s) {
    const gw = { namespace: ns, name: 'httproute-hostname-intersection' };
    describe('HTTPRoutes that do intersect with listener hostnames', () => {
      let addr: string | undefined;
      it('Gateway and HTTPRoutes must be accepted', async () => {
        await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
        const routes = [
          'specific-host-matches-listener-specific-host',
          'specific-host-matches-listener-wildcard-host',
          'wildcard-host-matches-listener-specific-host',
          'wildcard-host-matches-listener-wildcard-host',
        ].map((name) => ({ namespace: ns, name }));
        addr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gw, routes);
        for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gw);
      });
      httpCases(s, () => addr, [
        to('very.specific.com', '/s1', v1),
        to('very.specific.com:1234', '/s1', v1),
        notFound('non.matching.com', '/s1'),
        notFound('foo.nonmatchingwildcard.io', '/s1'),
        notFound('foo.wildcard.io', '/s1'),
        notFound('very.specific.com', '/non-matching-prefix'),
        to('foo.wildcard.io', '/s2', v2),
        to('bar.wildcard.io', '/s2', v2),
        to('foo.bar.wildcard.io', '/s2', v2),
        notFound('non.matching.com', '/s2'),
        notFound('wildcard.io', '/s2'),
        notFound('very.specific.com', '/s2'),
        notFound('foo.wildcard.io', '/non-matching-prefix'),
        to('very.specific.com', '/s3', v3),
        notFound('non.matching.com', '/s3'),
        notFound('foo.specific.com', '/s3'),
        notFound('foo.wildcard.io', '/s3'),
        notFound('very.specific.com', '/non-matching-prefix'),
        to('foo.anotherwildcard.io', '/s4', v1),
        to('bar.anotherwildcard.io', '/s4', v1),
        to('foo.bar.anotherwildcard.io', '/s4', v1),
        notFound('anotherwildcard.io', '/s4'),
        notFound('foo.wildcard.io', '/s4'),
        notFound('very.specific.com', '/s4'),
        notFound('foo.anotherwildcard.io', '/non-matching-prefix'),
      ]);
    });
    describe('HTTPRoutes that do not intersect with listener hostnames', () => {
      let addr: string | undefined;
      it('the route is not accepted: NoMatchingListenerHostname', async () => {
        addr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gw, []);
        await routeMustHaveParents(
          s.kube,
          s.timeoutConfig,
          { namespace: ns, name: 'no-intersecting-hosts' },
          [
            {
              parentRef: { group: GROUP, kind: 'Gateway', namespace: ns, name: gw.name },
              controllerName: s.controllerName,
              conditions: [{ type: 'Accepted', status: 'False', reason: 'NoMatchingListenerHostname' }],
            },
          ],
          true,
        );
      });
      httpCases(s, () => addr, [notFound('specific.but.wrong.com', '/s5'), notFound('wildcard.io', '/s5')]);
    });
    it('HTTPRoutes have to be counted in AttachedRoutes only if they are Accepted', async () => {
      const listener = (name: string, attachedRoutes: number) => ({
        name,
        supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
        conditions: [
          { type: 'Accepted', status: 'True' as const },
          { type: 'ResolvedRefs', status: 'True' as const },
        ],
        attachedRoutes,
      });
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gw, [
        listener('listener-1', 2),
        listener('listener-2', 1),
        listener('listener-3', 1),
      ]);
    });
    describe('HTTPRoutes intersects with an unspecified hostname listener', () => {
      let addr: string | undefined;
      const all = { namespace: ns, name: 'httproute-hostname-intersection-all' };
      it('Gateway and HTTPRoutes must be accepted', async () => {
        addr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, all, [all]);
        await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, all, all);
      });
      httpCases(s, () => addr, [
        to('first.com', '/', v2),
        to('sub.first.com', '/', v2),
        to('second.com', '/', v2),
        to('sub.second.com', '/', v2),
        { request: { host: 'third.com', path: '/' }, namespace: ns, response: { statusCode: 404 } },
        { request: { host: 'sub.third.com', path: '/' }, namespace: ns, response: { statusCode: 404 } },
      ]);
    });
  },
});
