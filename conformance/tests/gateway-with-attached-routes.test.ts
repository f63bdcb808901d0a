// Upstream conformance tests GatewayWithAttachedRoutes and GatewayWithAttachedRoutesWithPort8080 (Gateway API v1.6.1
// conformance/tests/gateway-with-attached-routes.go), with their manifests and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { type Cond, GROUP, gatewayStatusMustHaveListeners, httpRouteMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const kinds = [{ group: GROUP, kind: 'HTTPRoute' }];
const acceptedResolved: Cond[] = [
  { type: 'Accepted', status: 'True' },
  { type: 'ResolvedRefs', status: 'True' },
];

runConformanceTest({
  shortName: 'GatewayWithAttachedRoutes',
  description: 'A Gateway in the gateway-conformance-infra namespace should be attached to routes.',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/gateway-with-attached-routes.yaml'],
  test(s) {
    it('Gateway listener should have one valid http routes attached', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: ns, name: 'gateway-with-one-attached-route' },
        [{ name: 'http', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 1 }],
      ));
    it('Gateway listener should have two valid http routes attached', async () => {
      const gwNN = { namespace: ns, name: 'gateway-with-two-attached-routes' };
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        { name: 'http', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 2 },
      ]);
      await httpRouteMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        { namespace: ns, name: 'http-route-not-accepted' },
        gwNN,
        {
          type: 'Accepted',
          status: 'False',
          reason: 'NoMatchingListenerHostname',
        },
      );
    });
    it('Gateway listener should have AttachedRoutes set even when Gateway has unresolved refs', async () => {
      const gwNN = { namespace: ns, name: 'unresolved-gateway-with-one-attached-unresolved-route' };
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        {
          name: 'tls',
          supportedKinds: kinds,
          conditions: [
            { type: 'Programmed', status: 'False' },
            { type: 'ResolvedRefs', status: 'False' },
          ],
          attachedRoutes: 1,
        },
      ]);
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, { namespace: ns, name: 'http-route-4' }, gwNN, {
        type: 'ResolvedRefs',
        status: 'False',
      });
    });
  },
});

runConformanceTest({
  shortName: 'GatewayWithAttachedRoutesWithPort8080',
  description: 'A Gateway in the gateway-conformance-infra namespace should be attached to routes.',
  features: ['Gateway', 'GatewayPort8080', 'HTTPRoute'],
  manifests: ['tests/gateway-with-attached-routes-with-port-8080.yaml'],
  test(s) {
    it('Gateway listener should have attached route by specifying the sectionName', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: ns, name: 'gateway-with-two-listeners-and-one-attached-route' },
        [
          { name: 'http-unattached', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 0 },
          { name: 'http', supportedKinds: kinds, conditions: acceptedResolved, attachedRoutes: 1 },
        ],
      ));
  },
});
