// Upstream conformance test GatewayInvalidTLSConfiguration (Gateway API v1.6.1
// conformance/tests/gateway-invalid-tls-configuration.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GROUP, gatewayStatusMustHaveListeners } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

const listeners = [
  {
    name: 'https',
    supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
    conditions: [{ type: 'ResolvedRefs', status: 'False' as const, reason: 'InvalidCertificateRef' }],
    attachedRoutes: 0,
  },
];

runConformanceTest({
  shortName: 'GatewayInvalidTLSConfiguration',
  description: 'A Gateway should fail to become ready if the Gateway has an invalid TLS configuration',
  features: ['Gateway'],
  manifests: ['tests/gateway-invalid-tls-configuration.yaml'],
  test(s) {
    for (const [name, gw] of [
      [
        'Nonexistent secret referenced as CertificateRef in a Gateway listener',
        'gateway-certificate-nonexistent-secret',
      ],
      [
        'Unsupported group resource referenced as CertificateRef in a Gateway listener',
        'gateway-certificate-unsupported-group',
      ],
      [
        'Unsupported kind resource referenced as CertificateRef in a Gateway listener',
        'gateway-certificate-unsupported-kind',
      ],
      ['Malformed secret referenced as CertificateRef in a Gateway listener', 'gateway-certificate-malformed-secret'],
    ]) {
      it.concurrent(name, () =>
        gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, { namespace: INFRA_NS, name: gw }, listeners),
      );
    }
  },
});
