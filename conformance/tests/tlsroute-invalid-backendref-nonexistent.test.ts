// Upstream conformance test TLSRouteInvalidBackendRefNonexistent (Gateway API v1.6.1 conformance/tests/
// tlsroute-invalid-backendref-nonexistent.go), with its manifest and expectations: ResolvedRefs False/BackendNotFound,
// and TLS connections for the route's hostname rejected (reset or closed).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayAndTLSRoutesMustBeAccepted,
  namespacesMustBeReady,
  routeMustHaveCondition,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTLSConnectionAndExpectEventuallyConnectionRejection } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TLSRouteInvalidBackendRefNonexistent',
  description:
    'A single TLSRoute in the gateway-conformance-infra namespace has a ResolvedRefs status False with reason BackendNotFound when binding to a Gateway in the same namespace, if the route has a BackendRef Service that does not exist',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-invalid-backendref-nonexistent.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'invalid-backend-ref-nonexistent' };
    const gwNN = { namespace: ns, name: 'gateway-tlsroute-invalid-backend-ref-nonexistent' };
    let gwAddr = '';
    let hostnames: string[] = [];
    it('namespaces ready, Gateway and TLSRoute accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      ({ addr: gwAddr, hostnames } = await gatewayAndTLSRoutesMustBeAccepted(
        s.kube,
        s.timeoutConfig,
        s.controllerName,
        gwNN,
        [routeNN],
      ));
    });
    it('TLSRoute with only a nonexistent BackendRef has a ResolvedRefs Condition with status False and Reason BackendNotFound', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound' },
        'TLSRoute',
      ));
    it('TLS connection to nonexistent backend should be rejected', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTLSConnectionAndExpectEventuallyConnectionRejection(s.timeoutConfig, gwAddr, hostnames[0]);
    });
  },
});
