// Upstream conformance test TCPRouteWeightedRouting (Gateway API v1.6.1 conformance/tests/tcproute-weighted-routing.go,
// provisional), with its manifest and expectations: 70/30/0 across tcp-backend-v1/v2/v3 by upstream's
// weighted-distribution check, one TCP connection per sample.
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import { namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { echoSendOnce, expectAddressBeAvailable } from '../utils/tcp.ts';
import { MAX_TEST_RETRIES, testWeightedDistribution } from '../utils/weight.ts';

runConformanceTest({
  shortName: 'TCPRouteWeightedRouting',
  description:
    'A TCPRoute with multiple weighted backends should distribute TCP traffic across the backends in proportion to the configured weights, and a backend with weight 0 should receive no traffic.',
  features: ['Gateway', 'TCPRoute'],
  provisional: true,
  manifests: ['tests/tcproute-weighted-routing.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'tcp-weighted-gateway' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const addr = routesAccepted(
      s,
      { ...gwNN, listenerNames: ['tcp'] },
      [{ namespace: ns, name: 'tcp-weighted-route' }],
      {
        kind: 'TCPRoute',
      },
    );
    it('TCP traffic should be distributed across the weighted backends and skip the zero-weighted backend', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      const weights = { 'tcp-backend-v1': 0.7, 'tcp-backend-v2': 0.3, 'tcp-backend-v3': 0 };
      await expectAddressBeAvailable(s.timeoutConfig.defaultPollInterval, s.timeoutConfig.maxTimeToConsistency, gwAddr);
      const send = () => echoSendOnce(gwAddr, s.timeoutConfig.requestTimeout);
      const tries: string[] = [];
      for (let i = 0; i < MAX_TEST_RETRIES; i++) {
        const miss = await testWeightedDistribution(send, weights);
        if (!miss) return;
        tries.push(`(${i + 1}/${MAX_TEST_RETRIES}) ${miss}`);
      }
      throw new Error(`TCP weighted distribution did not converge within tolerance:\n${tries.join('\n')}`);
    });
  },
});
