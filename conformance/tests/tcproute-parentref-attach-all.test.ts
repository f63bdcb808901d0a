// Upstream conformance test TCPRouteParentRefAttachAll (Gateway API v1.6.1
// conformance/tests/tcproute-parentref-attach-all.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, namespacesMustBeReady, routeMustHaveParents, waitForGatewayAddress } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TCPRouteParentRefAttachAll',
  description:
    'A TCPRoute whose parentRef sets neither sectionName nor port should attach to every TCP listener on the Gateway, and traffic to each listener should reach the configured backend.',
  features: ['Gateway', 'TCPRoute'],
  provisional: true,
  manifests: ['tests/tcproute-parentref-attach-all.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'tcp-attach-all-gateway' };
    const routeNN = { namespace: ns, name: 'tcp-route-attach-all' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it('TCPRoute is Accepted on the Gateway', () =>
      routeMustHaveParents(
        s.kube,
        s.timeoutConfig,
        routeNN,
        [
          {
            parentRef: { group: GROUP, kind: 'Gateway', name: gwNN.name, namespace: ns },
            controllerName: s.controllerName,
            conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
          },
        ],
        false,
        'TCPRoute',
      ));
    // Each listener routes to the same backend, the attach-all TCPRoute being the only route on the Gateway.
    for (const listener of ['one', 'two', 'three', 'four']) {
      it(`Listener ${listener} routes to the attach-all backend`, async () => {
        const gwAddr = await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: [listener] });
        await makeTCPRequestAndExpectEventuallyValidResponse(s.timeoutConfig, gwAddr, {
          backend: 'tcp-echo-attach-all',
          namespace: ns,
        });
      });
    }
  },
});
