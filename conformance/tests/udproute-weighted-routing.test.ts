// Upstream conformance test UDPRouteWeightedRouting (Gateway API v1.6.1 conformance/tests/udproute-weighted-routing.go,
// provisional), with its manifest and expectations: 70/30/0 across udp-backend-v1/v2/v3 by upstream's
// weighted-distribution check, one datagram on a new socket per sample.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { expectEchoResponseFromBackend, udpEchoSendOnce } from '../utils/udp.ts';
import { MAX_TEST_RETRIES, testWeightedDistribution } from '../utils/weight.ts';

runConformanceTest({
  shortName: 'UDPRouteWeightedRouting',
  description:
    'A UDPRoute with multiple weighted backends should distribute UDP traffic across the backends in proportion to the configured weights, and a backend with weight 0 should not receive any traffic.',
  features: ['Gateway', 'UDPRoute'],
  provisional: true,
  manifests: ['tests/udproute-weighted-routing.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'udp-weighted-gateway' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const addr = routesAccepted(
      s,
      { ...gwNN, listenerNames: ['udp'] },
      [{ namespace: ns, name: 'udp-weighted-route' }],
      {
        kind: 'UDPRoute',
      },
    );
    it('UDP traffic should be distributed across the weighted backends', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      const weights = { 'udp-backend-v1': 0.7, 'udp-backend-v2': 0.3, 'udp-backend-v3': 0 };
      await expectEchoResponseFromBackend(s.timeoutConfig.maxTimeToConsistency, gwAddr);
      const send = () => udpEchoSendOnce(gwAddr, 2000);
      const tries: string[] = [];
      for (let i = 0; i < MAX_TEST_RETRIES; i++) {
        const miss = await testWeightedDistribution(send, weights);
        if (!miss) return;
        tries.push(`(${i + 1}/${MAX_TEST_RETRIES}) ${miss}`);
      }
      throw new Error(`UDP weighted distribution did not converge within tolerance:\n${tries.join('\n')}`);
    });
  },
});
