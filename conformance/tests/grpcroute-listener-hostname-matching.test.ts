// Upstream conformance test GRPCRouteListenerHostnameMatching (Gateway API v1.6.1 conformance/tests/grpcroute-listener-
// hostname-matching.go), with its manifest and expectations: four listeners on one port with different hostnames, a
// GRPCRoute each (the last route on two); the :authority picks the listener's route; no listener's host:
// UNIMPLEMENTED (no route).
import { status } from '@grpc/grpc-js';
import { it } from 'vitest';
import { grpcCases, runConformanceTest } from '../support/run.ts';
import type { GrpcExpectedResponse } from '../utils/grpc.ts';
import { gatewayAndRoutesMustBeAccepted, namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const to = (authority: string, backend: string): GrpcExpectedResponse => ({
  requestMetadata: { authority },
  backend,
  namespace: ns,
});

runConformanceTest({
  shortName: 'GRPCRouteListenerHostnameMatching',
  description: 'Multiple GRPC listeners with the same port and different hostnames, each with a different GRPCRoute',
  features: ['Gateway', 'GRPCRoute'],
  manifests: ['tests/grpcroute-listener-hostname-matching.yaml'],
  test(s) {
    let addr: string | undefined;
    it('Gateway and GRPCRoutes must be accepted', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const name = 'grpcroute-listener-hostname-matching';
      const accepted = (listenerNames: string[], route: string) =>
        gatewayAndRoutesMustBeAccepted(
          s.kube,
          s.timeoutConfig,
          s.controllerName,
          { namespace: ns, name, listenerNames },
          [{ namespace: ns, name: route }],
          'GRPCRoute',
        );
      await accepted(['listener-1'], 'backend-v1');
      await accepted(['listener-2'], 'backend-v2');
      addr = await accepted(['listener-3', 'listener-4'], 'backend-v3');
    });
    grpcCases(s, () => addr, [
      to('bar.com', 'grpc-infra-backend-v1'),
      to('foo.bar.com', 'grpc-infra-backend-v2'),
      to('baz.bar.com', 'grpc-infra-backend-v3'),
      to('boo.bar.com', 'grpc-infra-backend-v3'),
      to('multiple.prefixes.bar.com', 'grpc-infra-backend-v3'),
      to('multiple.prefixes.foo.com', 'grpc-infra-backend-v3'),
      { requestMetadata: { authority: 'foo.com' }, code: status.UNIMPLEMENTED },
      { requestMetadata: { authority: 'no.matching.host' }, code: status.UNIMPLEMENTED },
    ]);
  },
});
