// Upstream conformance test GatewayInvalidTLSBackendConfiguration (Gateway API v1.6.1
// conformance/tests/gateway-invalid-tls-backend-configuration.go), with its manifest and expectations: a Gateway whose
// spec.tls.backend.clientCertificateRef is a missing Secret, another group or kind, a Secret without tls.crt/tls.key,
// or a Secret in another namespace without a ReferenceGrant reads ResolvedRefs=False (InvalidClientCertificateRef,
// RefNotPermitted) and stays Accepted.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayMustHaveCondition, mustHaveLatestConditions } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const cases: [string, string, string][] = [
  [
    'Nonexistent secret referenced as ClientCertificateRef in Gateway backend TLS configuration',
    'gateway-client-certificate-nonexistent-secret',
    'InvalidClientCertificateRef',
  ],
  [
    'Unsupported group resource referenced as ClientCertificateRef in Gateway backend TLS configuration',
    'gateway-client-certificate-unsupported-group',
    'InvalidClientCertificateRef',
  ],
  [
    'Unsupported kind resource referenced as ClientCertificateRef inGateway backend TLS configuration',
    'gateway-client-certificate-unsupported-kind',
    'InvalidClientCertificateRef',
  ],
  [
    'Malformed secret referenced as ClientCertificateRef in Gateway backend TLS configuration',
    'gateway-client-certificate-malformed-secret',
    'InvalidClientCertificateRef',
  ],
  [
    'Secret referenced from another namespace without any ReferenceGrant as ClientCertificateRef in Gateway backend TLS configuration',
    'gateway-client-certificate-missing-reference-grant',
    'RefNotPermitted',
  ],
];

runConformanceTest({
  shortName: 'GatewayInvalidTLSBackendConfiguration',
  description:
    'A Gateway should have ResolvedRefs condition set false if the Gateway has an invalid backend TLS configuration',
  features: ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/gateway-invalid-tls-backend-configuration.yaml'],
  test(s) {
    for (const [name, gw, reason] of cases) {
      it(name, async () => {
        const gwNN = { namespace: ns, name: gw };
        await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
        await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
          type: 'ResolvedRefs',
          status: 'False',
          reason,
        });
        await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
        });
      });
    }
  },
});
