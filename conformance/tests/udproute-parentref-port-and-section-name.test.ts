// Upstream conformance test UDPRouteParentRefPortAndSectionName (Gateway API v1.6.1
// conformance/tests/udproute-parentref-port-and-section-name.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, namespacesMustBeReady, routeMustHaveParents, waitForGatewayAddress } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { expectEchoResponseFromBackend } from '../utils/udp.ts';

runConformanceTest({
  shortName: 'UDPRouteParentRefPortAndSectionName',
  description:
    'A UDPRoute attaches to a UDP listener selected by port, by sectionName, or by both, and traffic to each listener is routed to the backend Service configured by the corresponding UDPRoute.',
  features: ['Gateway', 'UDPRoute'],
  provisional: true,
  manifests: ['tests/udproute-parentref-port-and-section-name.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'udp-multi-listener-gateway' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const scenarios = [
      ['UDPRoute attaches to a UDP listener by port', 'udp-route-by-port', 'by-port', 'udp-echo-by-port'],
      [
        'UDPRoute attaches to a UDP listener by sectionName',
        'udp-route-by-section',
        'by-section',
        'udp-echo-by-section',
      ],
      [
        'UDPRoute attaches to a UDP listener by sectionName and port',
        'udp-route-by-section-and-port',
        'by-section-and-port',
        'udp-echo-by-section-and-port',
      ],
    ] as const;
    for (const [name, route, listener, backend] of scenarios) {
      it(name, async () => {
        await routeMustHaveParents(
          s.kube,
          s.timeoutConfig,
          { namespace: ns, name: route },
          [
            {
              parentRef: { group: GROUP, kind: 'Gateway', name: gwNN.name, namespace: ns },
              controllerName: s.controllerName,
              conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
            },
          ],
          false,
          'UDPRoute',
        );
        const gwAddr = await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: [listener] });
        await expectEchoResponseFromBackend(s.timeoutConfig.defaultTestTimeout, gwAddr, {
          service: backend,
          namespace: ns,
        });
      });
    }
  },
});
