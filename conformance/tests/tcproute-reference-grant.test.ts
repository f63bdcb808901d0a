// Upstream conformance test TCPRouteReferenceGrant (Gateway API v1.6.1 conformance/tests/tcproute-reference-grant.go,
// provisional), with its manifest and expectations: the cross-namespace backend reached while the ReferenceGrant
// exists, ResolvedRefs False/RefNotPermitted once it is deleted.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { GW, namespacesMustBeReady, routeMustHaveCondition } from '../utils/kubernetes.ts';
import { INFRA_NS as ns, WEB_BACKEND_NS } from '../utils/suite.ts';
import { makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TCPRouteReferenceGrant',
  description:
    'A single TCPRoute in the gateway-conformance-infra namespace, with a backendRef in the gateway-conformance-web-backend namespace, should attach to a Gateway in the gateway-conformance-infra namespace when a ReferenceGrant in the backend namespace permits the reference.',
  features: ['Gateway', 'TCPRoute', 'ReferenceGrant'],
  provisional: true,
  manifests: ['tests/tcproute-reference-grant.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'tcp-reference-grant' };
    const gwNN = { namespace: ns, name: 'tcp-reference-grant-gateway' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns, WEB_BACKEND_NS]));
    const addr = routesAccepted(s, { ...gwNN, listenerNames: ['tcp'] }, [routeNN], { kind: 'TCPRoute' });
    it('TCP request should reach the cross-namespace backend', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTCPRequestAndExpectEventuallyValidResponse(s.timeoutConfig, gwAddr, {
        backend: 'tcp-reference-grant-backend',
        namespace: WEB_BACKEND_NS,
      });
    });
    it('TCPRoute ResolvedRefs becomes False with reason RefNotPermitted after the ReferenceGrant is deleted', async () => {
      await s.kube.delete({
        apiVersion: GW,
        kind: 'ReferenceGrant',
        metadata: { name: 'tcp-reference-grant', namespace: WEB_BACKEND_NS },
      });
      await routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' },
        'TCPRoute',
      );
    });
  },
});
