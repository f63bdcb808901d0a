// Upstream conformance test TCPRouteMultipleRoutesAttachment (Gateway API v1.6.1
// conformance/tests/tcproute-multiple-routes-attachment.go), with its manifest and expectations: a second, newer
// TCPRoute on the same listener is Accepted and counted in AttachedRoutes, but only the oldest route gets traffic.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import type { KObj } from '../../lab/toolkit/kube.ts';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import {
  GROUP,
  GW,
  gatewayStatusMustHaveListeners,
  namespacesMustBeReady,
  routeMustHaveCondition,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { echoSendOnce, makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TCPRouteMultipleRoutesAttachment',
  description:
    "When two TCPRoutes target the same Gateway listener, both must report Accepted=True. Only the oldest route is attached to the listener, and the listener's AttachedRoutes count must reflect this.",
  features: ['Gateway', 'TCPRoute'],
  manifests: ['tests/tcproute-multiple-routes-attachment.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'tcp-multi-route-attach-gateway' };
    const olderRouteNN = { namespace: ns, name: 'tcproute-attach-older' };
    const newerRouteNN = { namespace: ns, name: 'tcproute-attach-newer' };
    const newerRoute: KObj = {
      apiVersion: GW,
      kind: 'TCPRoute',
      metadata: { name: newerRouteNN.name, namespace: ns },
      spec: {
        parentRefs: [{ name: gwNN.name, sectionName: 'tcp' }],
        rules: [{ backendRefs: [{ name: 'tcp-attach-backend-2', port: 3000 }] }],
      },
    };
    afterAll(() => s.kube.delete(newerRoute));
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    // The Gateway and the older TCPRoute ready before the second route is introduced, so creation order is plain.
    const addr = routesAccepted(s, { ...gwNN, listenerNames: ['tcp'] }, [olderRouteNN], { kind: 'TCPRoute' });
    it('the newer TCPRoute is applied', async () => {
      // CreationTimestamp has second-level precision: the second route must be strictly newer.
      await sleep(1000);
      await s.kube.apply(newerRoute);
    });
    const accepted = { type: 'Accepted', status: 'True' as const, reason: 'Accepted' };
    it('Both TCPRoutes should be Accepted by the Gateway', async () => {
      await routeMustHaveCondition(s.kube, s.timeoutConfig, olderRouteNN, gwNN, accepted, 'TCPRoute');
      await routeMustHaveCondition(s.kube, s.timeoutConfig, newerRouteNN, gwNN, accepted, 'TCPRoute');
    });
    it('Gateway listener should report 2 attached Routes', () =>
      gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        {
          name: 'tcp',
          supportedKinds: [{ group: GROUP, kind: 'TCPRoute' }],
          conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
          attachedRoutes: 2,
        },
      ]));
    it('Only the oldest TCPRoute should receive traffic', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTCPRequestAndExpectEventuallyValidResponse(s.timeoutConfig, gwAddr, {
        backend: 'tcp-attach-backend-1',
        namespace: ns,
      });
      // Many connections: one could reach the older backend by chance even if both routes were attached.
      for (let i = 0; i < 100; i++) {
        const pod = await echoSendOnce(gwAddr, 5000);
        expect(
          pod.startsWith('tcp-attach-backend-2-'),
          `request ${i + 1}/100 reached newer route backend "${pod}"; only the oldest route should be attached`,
        ).toBe(false);
        expect(
          pod.startsWith('tcp-attach-backend-1-'),
          `request ${i + 1}/100 reached unexpected backend "${pod}"; expected pod from "tcp-attach-backend-1-"`,
        ).toBe(true);
      }
    });
  },
});
