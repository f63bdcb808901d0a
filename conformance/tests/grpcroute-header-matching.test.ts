// Upstream conformance test GRPCRouteHeaderMatching (Gateway API v1.6.1 conformance/tests/grpcroute-header-
// matching.go), with its manifest and expectations: header matches (one, two ANDed, alternatives ORed) pick the
// backend, the rule with more header matches first; unmatched metadata gets UNIMPLEMENTED (no route).
import { status } from '@grpc/grpc-js';
import { grpcCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { GrpcExpectedResponse } from '../utils/grpc.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const to = (metadata: Record<string, string>, backend: string): GrpcExpectedResponse => ({
  requestMetadata: { metadata },
  backend,
  namespace: ns,
});
const none = (metadata: Record<string, string>): GrpcExpectedResponse => ({
  requestMetadata: { metadata },
  code: status.UNIMPLEMENTED,
});

runConformanceTest({
  shortName: 'GRPCRouteHeaderMatching',
  description: 'A single GRPCRoute with header matching for different backends',
  features: ['Gateway', 'GRPCRoute'],
  manifests: ['tests/grpcroute-header-matching.yaml'],
  test(s) {
    const addr = routesAccepted(
      s,
      { namespace: ns, name: 'same-namespace' },
      [{ namespace: ns, name: 'grpc-header-matching' }],
      { kind: 'GRPCRoute' },
    );
    grpcCases(s, addr, [
      to({ Version: 'one' }, 'grpc-infra-backend-v1'),
      to({ Version: 'two' }, 'grpc-infra-backend-v2'),
      to({ Version: 'two', Color: 'orange' }, 'grpc-infra-backend-v1'),
      to({ Version: 'two', Color: 'blue' }, 'grpc-infra-backend-v2'),
      none({ Color: 'orange' }),
      none({ 'Some-Other-Header': 'one' }),
      to({ Color: 'blue' }, 'grpc-infra-backend-v1'),
      to({ Color: 'green' }, 'grpc-infra-backend-v1'),
      to({ Color: 'red' }, 'grpc-infra-backend-v2'),
      to({ Color: 'yellow' }, 'grpc-infra-backend-v2'),
      none({ Color: 'purple' }),
    ]);
  },
});
