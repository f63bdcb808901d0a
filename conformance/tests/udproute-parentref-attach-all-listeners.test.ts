// Upstream conformance test UDPRouteParentRefAttachAllListeners (Gateway API v1.6.1
// conformance/tests/udproute-parentref-attach-all-listeners.go, provisional), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  GROUP,
  gatewayStatusMustHaveListeners,
  namespacesMustBeReady,
  routeMustHaveParents,
  waitForGatewayAddress,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { expectEchoResponseFromBackend } from '../utils/udp.ts';

runConformanceTest({
  shortName: 'UDPRouteParentRefAttachAllListeners',
  description:
    'A UDPRoute whose parentRef sets neither `port` nor `sectionName` attaches to every UDP listener on the Gateway, and traffic to each listener reaches the configured backend.',
  features: ['Gateway', 'UDPRoute'],
  provisional: true,
  manifests: ['tests/udproute-parentref-attach-all-listeners.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'udp-attach-all-listeners-gateway' };
    const routeNN = { namespace: ns, name: 'udp-route-attach-all' };
    const backend = 'udp-echo-attach-all';
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it('UDPRoute is accepted by the Gateway', () =>
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
        'UDPRoute',
      ));
    const listeners = ['udp-1', 'udp-2', 'udp-3'];
    it('Every UDP listener on the Gateway has the UDPRoute attached', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        gwNN,
        listeners.map((name) => ({
          name,
          supportedKinds: [{ group: GROUP, kind: 'UDPRoute' }],
          attachedRoutes: 1,
          conditions: [
            { type: 'Accepted', status: 'True' as const },
            { type: 'ResolvedRefs', status: 'True' as const },
          ],
        })),
      ));
    for (const listener of listeners) {
      it(`UDP echo via listener ${listener} reaches the backend`, async () => {
        const gwAddr = await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: [listener] });
        await expectEchoResponseFromBackend(s.timeoutConfig.defaultTestTimeout, gwAddr, {
          service: backend,
          namespace: ns,
        });
      });
    }
  },
});
