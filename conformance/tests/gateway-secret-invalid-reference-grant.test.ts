// Upstream conformance test GatewaySecretInvalidReferenceGrant (Gateway API v1.6.1 conformance/tests/gateway-secret-invalid-reference-grant.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewaySecretInvalidReferenceGrant',
  description:
    'A Gateway in the gateway-conformance-infra namespace should fail to become ready if the Gateway has a certificateRef for a Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant exists but does not grant permission to that specific Secret',
  features: ['Gateway', 'ReferenceGrant'],
  manifests: ['tests/gateway-secret-invalid-reference-grant.yaml'],
  test(s) {
    it('Gateway listener should have a false ResolvedRefs condition with reason RefNotPermitted', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-secret-invalid-reference-grant' },
        [
          {
            name: 'https',
            supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
            conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' }],
            attachedRoutes: 0,
          },
        ],
      ));
  },
});
