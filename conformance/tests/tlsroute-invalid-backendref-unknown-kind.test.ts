// Upstream conformance test TLSRouteInvalidBackendRefUnknownKind (Gateway API v1.6.1 conformance/tests/
// tlsroute-invalid-backendref-unknown-kind.go), with its manifest and expectations: ResolvedRefs False/InvalidKind (a backendRef of an unknown kind),
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
  shortName: 'TLSRouteInvalidBackendRefUnknownKind',
  description:
    'A single TLSRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason InvalidKind when attempting to bind to a Gateway in the same namespace if the route has a BackendRef that points to an unknown Kind.',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-invalid-backendref-unknown-kind.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'invalid-backend-ref-unknown-kind' };
    const gwNN = { namespace: ns, name: 'gateway-tlsroute-invalid-backend-ref-unknown-kind' };
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
    it('TLSRoute with Invalid Kind has a ResolvedRefs Condition with status False and Reason InvalidKind', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        routeNN,
        gwNN,
        { type: 'ResolvedRefs', status: 'False', reason: 'InvalidKind' },
        'TLSRoute',
      ));
    it('TLS connection to invalid backend with invalid Kind should be rejected', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTLSConnectionAndExpectEventuallyConnectionRejection(s.timeoutConfig, gwAddr, hostnames[0]);
    });
  },
});
