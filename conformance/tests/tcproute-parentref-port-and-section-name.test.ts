// Upstream conformance test TCPRouteParentRefPortAndSectionName (Gateway API v1.6.1
// conformance/tests/tcproute-parentref-port-and-section-name.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  GROUP,
  namespacesMustBeReady,
  type ParentStatus,
  routeMustHaveParents,
  waitForGatewayAddress,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TCPRouteParentRefPortAndSectionName',
  description: 'A TCPRoute attaches to a TCP listener by port, by sectionName, or by both.',
  features: ['Gateway', 'TCPRoute'],
  provisional: true,
  manifests: ['tests/tcproute-parentref-port-and-section-name.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'tcp-multi-listener-gateway' };
    const accepted = (): ParentStatus[] => [
      {
        parentRef: { group: GROUP, kind: 'Gateway', name: gwNN.name, namespace: ns },
        controllerName: s.controllerName,
        conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
      },
    ];
    const expectBackendForListener = async (listener: string, backend: string) => {
      const gwAddr = await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: [listener] });
      await makeTCPRequestAndExpectEventuallyValidResponse(s.timeoutConfig, gwAddr, { backend, namespace: ns });
    };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const cases = [
      ['by port', 'tcp-route-by-port', 'one', 'tcp-echo-one'],
      ['by sectionName', 'tcp-route-by-section', 'two', 'tcp-echo-two'],
      ['by sectionName and port', 'tcp-route-by-section-and-port', 'three', 'tcp-echo-three'],
    ] as const;
    for (const [how, route, listener, backend] of cases) {
      it(`TCPRoute attaches to a TCP listener ${how}`, async () => {
        await routeMustHaveParents(
          s.kube,
          s.timeoutConfig,
          { namespace: ns, name: route },
          accepted(),
          false,
          'TCPRoute',
        );
        await expectBackendForListener(listener, backend);
      });
    }
  },
});
