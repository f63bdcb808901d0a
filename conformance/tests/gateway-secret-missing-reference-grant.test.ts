// Upstream conformance test GatewaySecretMissingReferenceGrant (Gateway API v1.6.1 conformance/tests/gateway-secret-missing-reference-grant.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewaySecretMissingReferenceGrant',
  description:
    'A Gateway in the gateway-conformance-infra namespace should fail to become programmed if the Gateway has a certificateRef for a Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to the Secret does not exist',
  features: ['Gateway', 'ReferenceGrant'],
  manifests: ['tests/gateway-secret-missing-reference-grant.yaml'],
  test(s) {
    it('Gateway listener should have a false ResolvedRefs condition with reason RefNotPermitted', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-secret-missing-reference-grant' },
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
