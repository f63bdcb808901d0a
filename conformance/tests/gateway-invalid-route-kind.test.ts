// Upstream conformance test GatewayInvalidRouteKind (Gateway API v1.6.1 conformance/tests/gateway-invalid-route-kind.go),
// with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

const invalidKinds = [{ type: 'ResolvedRefs', status: 'False' as const, reason: 'InvalidRouteKinds' }];

runConformanceTest({
  shortName: 'GatewayInvalidRouteKind',
  description:
    'A Gateway in the gateway-conformance-infra namespace should fail to become ready an invalid Route kind is specified.',
  features: ['Gateway'],
  manifests: ['tests/gateway-invalid-route-kind.yaml'],
  test(s) {
    it('Gateway listener should have a false ResolvedRefs condition with reason InvalidRouteKinds and no supportedKinds', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-only-invalid-route-kind' },
        [{ name: 'http', supportedKinds: [], conditions: invalidKinds, attachedRoutes: 0 }],
      ));
    it('Gateway listener should have a false ResolvedRefs condition with reason InvalidRouteKinds and HTTPRoute must be put in the supportedKinds', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-supported-and-invalid-route-kind' },
        [
          {
            name: 'http',
            supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
            conditions: invalidKinds,
            attachedRoutes: 0,
          },
        ],
      ));
  },
});
