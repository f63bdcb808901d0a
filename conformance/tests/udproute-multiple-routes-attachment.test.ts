// Upstream conformance test UDPRouteMultipleRoutesAttachment (Gateway API v1.6.1
// conformance/tests/udproute-multiple-routes-attachment.go, provisional), with its manifest and expectations: a
// second, newer UDPRoute on the same listener is Accepted and counted in AttachedRoutes, but only the oldest route
// gets traffic.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, it } from 'vitest';
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
import { udpEchoSendOnce } from '../utils/udp.ts';
import { extractBackendName } from '../utils/weight.ts';

runConformanceTest({
  shortName: 'UDPRouteMultipleRoutesAttachment',
  description:
    "When two UDPRoutes target the same Gateway listener, both must report Accepted=True. Only the oldest route is attached and receives traffic; the listener's AttachedRoutes count must reflect both.",
  features: ['Gateway', 'UDPRoute'],
  provisional: true,
  manifests: ['tests/udproute-multiple-routes-attachment.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'udp-multi-route-attach-gateway' };
    const olderRouteNN = { namespace: ns, name: 'udproute-attach-older' };
    const newerRouteNN = { namespace: ns, name: 'udproute-attach-newer' };
    const newerRoute: KObj = {
      apiVersion: GW,
      kind: 'UDPRoute',
      metadata: { name: newerRouteNN.name, namespace: ns },
      spec: {
        parentRefs: [{ name: gwNN.name, sectionName: 'udp' }],
        rules: [{ backendRefs: [{ name: 'udp-attach-backend-2', port: 8080 }] }],
      },
    };
    afterAll(() => s.kube.delete(newerRoute));
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const addr = routesAccepted(s, { ...gwNN, listenerNames: ['udp'] }, [olderRouteNN], { kind: 'UDPRoute' });
    it('the newer UDPRoute is applied', async () => {
      await sleep(1000); // CreationTimestamp has second-level precision
      await s.kube.apply(newerRoute);
    });
    const accepted = { type: 'Accepted', status: 'True' as const, reason: 'Accepted' };
    it('Both UDPRoutes should be Accepted by the Gateway', async () => {
      await routeMustHaveCondition(s.kube, s.timeoutConfig, olderRouteNN, gwNN, accepted, 'UDPRoute');
      await routeMustHaveCondition(s.kube, s.timeoutConfig, newerRouteNN, gwNN, accepted, 'UDPRoute');
    });
    it('Gateway listener should report 2 attached Routes', () =>
      gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        {
          name: 'udp',
          supportedKinds: [{ group: GROUP, kind: 'UDPRoute' }],
          conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
          attachedRoutes: 2,
        },
      ]));
    it('Only the oldest UDPRoute should receive traffic', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      // Upstream: every second for DefaultTestTimeout, 20 probes; a failed probe retries, a wrong backend fails.
      const deadline = Date.now() + s.timeoutConfig.defaultTestTimeout;
      let last = '';
      for (;;) {
        try {
          for (let i = 0; i < 20; i++) {
            const pod = await udpEchoSendOnce(gwAddr, 2000);
            const backend = extractBackendName(pod);
            if (backend !== 'udp-attach-backend-1')
              throw Object.assign(
                new Error(
                  `UDP traffic reached unexpected backend "${backend}" (pod "${pod}"); only udp-attach-backend-1 should receive traffic`,
                ),
                { fatal: true },
              );
          }
          return;
        } catch (err) {
          if ((err as { fatal?: boolean }).fatal) throw err;
          last = (err as Error).message;
        }
        if (Date.now() >= deadline) throw new Error(`UDP traffic verification failed: ${last}`);
        await sleep(1000);
      }
    });
  },
});
