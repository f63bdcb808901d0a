// Upstream conformance test GatewaySecretReferenceGrantAllInNamespace (Gateway API v1.6.1 conformance/tests/gateway-secret-reference-grant-all-in-namespace.go), with its manifest and
// expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewaySecretReferenceGrantAllInNamespace',
  description:
    'A Gateway in the gateway-conformance-infra namespace should become programmed if the Gateway has a certificateRef for a Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to all Secrets in the namespace exists',
  features: ['Gateway', 'ReferenceGrant'],
  manifests: ['tests/gateway-secret-reference-grant-all-in-namespace.yaml'],
  test(s) {
    it('Gateway listener should have a true ResolvedRefs condition and a true Programmed condition', () =>
      gatewayStatusMustHaveListeners(
        s.kube,
        s.timeoutConfig,
        { namespace: INFRA_NS, name: 'gateway-secret-reference-grant-all-in-namespace' },
        [
          {
            name: 'https',
            supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
            conditions: [
              { type: 'Programmed', status: 'True', reason: 'Programmed' },
              { type: 'ResolvedRefs', status: 'True' },
            ],
            attachedRoutes: 0,
          },
        ],
      ));
  },
});
