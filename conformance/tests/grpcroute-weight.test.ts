// Upstream conformance test GRPCRouteWeight (Gateway API v1.6.1 conformance/tests/grpcroute-weight.go), with its
// manifest and expectations: 70/30/0 across grpc-infra-backend-v1/v2/v3 by upstream's weighted-distribution check,
// each RPC on a client of its own (upstream's fresh DefaultClient per sample) with AddEntropy's x-jitter metadata.
import { status } from '@grpc/grpc-js';
import { it } from 'vitest';
import { routesAccepted, runConformanceTest } from '../support/run.ts';
import {
  addGrpcEntropy,
  GrpcClient,
  type GrpcExpectedResponse,
  makeGrpcRequestAndExpectEventuallyConsistentResponse,
} from '../utils/grpc.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { MAX_TEST_RETRIES, testWeightedDistribution } from '../utils/weight.ts';

runConformanceTest({
  shortName: 'GRPCRouteWeight',
  description: 'A GRPCRoute with weighted backends',
  features: ['Gateway', 'GRPCRoute'],
  manifests: ['tests/grpcroute-weight.yaml'],
  test(s) {
    const addr = routesAccepted(
      s,
      { namespace: ns, name: 'same-namespace' },
      [{ namespace: ns, name: 'weighted-backends' }],
      { kind: 'GRPCRoute' },
    );
    it('Requests should have a distribution that matches the weight', async () => {
      const gwAddr = addr();
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      const expected: GrpcExpectedResponse = { method: 'Echo', code: status.OK, namespace: ns };
      await makeGrpcRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, expected);
      const send = async () => {
        const client = new GrpcClient();
        try {
          const r = await client.sendRPC(gwAddr, addGrpcEntropy(expected), s.timeoutConfig.maxTimeToConsistency);
          if (r.code !== status.OK) throw new Error(`expected OK response, got ${r.code}`);
          return r.response?.assertions?.context?.pod ?? '';
        } finally {
          client.close();
        }
      };
      const weights = { 'grpc-infra-backend-v1': 0.7, 'grpc-infra-backend-v2': 0.3, 'grpc-infra-backend-v3': 0 };
      const tries: string[] = [];
      for (let i = 0; i < MAX_TEST_RETRIES; i++) {
        const miss = await testWeightedDistribution(send, weights);
        if (!miss) return;
        tries.push(`(${i + 1}/${MAX_TEST_RETRIES}) ${miss}`);
      }
      throw new Error(`Weighted distribution tests failed:\n${tries.join('\n')}`);
    });
  },
});
