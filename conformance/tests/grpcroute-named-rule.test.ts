// Upstream conformance test GRPCRouteNamedRule (Gateway API v1.6.1 conformance/tests/grpcroute-named-rule.go,
// provisional), with its manifest and expectations: a GRPCRoute whose rules have names routes as without them.
import { grpcCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GRPCRouteNamedRule',
  description: 'A GRPCRoute with a named GRPCRouteRule',
  features: ['Gateway', 'GRPCRoute', 'GRPCRouteNamedRouteRule'],
  provisional: true,
  manifests: ['tests/grpcroute-named-rule.yaml'],
  test(s) {
    const addr = routesAccepted(
      s,
      { namespace: ns, name: 'same-namespace' },
      [{ namespace: ns, name: 'grpc-named-rules' }],
      { kind: 'GRPCRoute' },
    );
    grpcCases(s, addr, [
      { method: 'Echo', backend: 'grpc-infra-backend-v1', namespace: ns },
      { method: 'EchoTwo', backend: 'grpc-infra-backend-v2', namespace: ns },
    ]);
  },
});
