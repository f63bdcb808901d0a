// Upstream conformance test GRPCExactMethodMatching (Gateway API v1.6.1 conformance/tests/grpcroute-exact-method-
// matching.go), with its manifest and expectations: Echo to grpc-infra-backend-v1, EchoTwo to -v2, EchoThree (no
// rule) UNIMPLEMENTED.
import { status } from '@grpc/grpc-js';
import { grpcCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GRPCExactMethodMatching',
  description: 'A single GRPCRoute with exact method matching for different backends',
  features: ['Gateway', 'GRPCRoute'],
  manifests: ['tests/grpcroute-exact-method-matching.yaml'],
  test(s) {
    const addr = routesAccepted(
      s,
      { namespace: ns, name: 'same-namespace' },
      [{ namespace: ns, name: 'exact-matching' }],
      {
        kind: 'GRPCRoute',
      },
    );
    grpcCases(s, addr, [
      { method: 'Echo', backend: 'grpc-infra-backend-v1', namespace: ns },
      { method: 'EchoTwo', backend: 'grpc-infra-backend-v2', namespace: ns },
      { method: 'EchoThree', code: status.UNIMPLEMENTED },
    ]);
  },
});
