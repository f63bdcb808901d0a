// Upstream conformance test UDPRouteReferenceGrant (Gateway API v1.6.1 conformance/tests/udproute-reference-grant.go,
// provisional), with its manifest and expectations: the cross-namespace backend answers while the ReferenceGrant
// exists, ResolvedRefs False/RefNotPermitted once it is deleted.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { GW, namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { APP_BACKEND_NS, INFRA_NS as ns } from '../utils/suite.ts';
import { expectEchoResponseFromBackend } from '../utils/udp.ts';

runConformanceTest({
  shortName: 'UDPRouteReferenceGrant',
  description:
    'A UDPRoute in the gateway-conformance-infra namespace, with a backendRef in the gateway-conformance-app-backend namespace, should attach to the Gateway and forward UDP traffic to the backend while a ReferenceGrant permits the cross-namespace reference.',
  features: ['Gateway', 'UDPRoute', 'ReferenceGrant'],
  provisional: true,
  manifests: ['tests/udproute-reference-grant.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'udp-route-reference-grant' };
    const gwNN = { namespace: ns, name: 'udp-gateway-reference-grant' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const addr = routesAccepted(s, gwNN, [routeNN], { kind: 'UDPRoute' });
    it('UDPRoute with cross-namespace backendRef and a permitting ReferenceGrant has ResolvedRefs=True', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
        'UDPRoute',
      ));
    it('UDP echo request reaches the cross-namespace backend while the ReferenceGrant exists', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await expectEchoResponseFromBackend(s.timeoutConfig.defaultTestTimeout, gwAddr);
    });
    it('UDPRoute has ResolvedRefs=False with reason RefNotPermitted after deleting the ReferenceGrant', async () => {
      await s.kube.delete({
        apiVersion: GW,
        kind: 'ReferenceGrant',
        metadata: { name: 'udp-reference-grant', namespace: APP_BACKEND_NS },
      });
      await routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' },
        'UDPRoute',
      );
    });
  },
});
