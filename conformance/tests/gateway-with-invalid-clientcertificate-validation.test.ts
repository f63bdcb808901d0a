// Upstream conformance test GatewayInvalidFrontendClientCertificateValidation (Gateway API v1.6.1
// conformance/tests/gateway-with-invalid-clientcertificate-validation.go, GEP-91), with its manifest and
// expectations: an invalid CA reference of the per-port validation affects only the listeners on that port
// (ResolvedRefs False with InvalidCACertificateRef, InvalidCACertificateKind or RefNotPermitted; Accepted
// False/NoValidCACertificate; not Programmed), the listener under the valid default stays ready.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import type { Cond } from '../utils/kubernetes.ts';
import { gatewayListenerMustHaveConditions } from '../utils/listener-conditions.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const invalid = (reason: string): Cond[] => [
  { type: 'ResolvedRefs', status: 'False', reason },
  { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' },
  { type: 'Programmed', status: 'False', reason: '' },
];

const cases: [string, string, Cond[]][] = [
  [
    'default valid configuration',
    'https',
    [
      { type: 'ResolvedRefs', status: 'True', reason: '' },
      { type: 'Accepted', status: 'True', reason: '' },
      { type: 'Programmed', status: 'True', reason: '' },
    ],
  ],
  ['unresolved reference', 'https-unresolved', invalid('InvalidCACertificateRef')],
  ['invalid kind', 'https-invalid-kind', invalid('InvalidCACertificateKind')],
  ['reference grant missing', 'https-grant-missing', invalid('RefNotPermitted')],
];

runConformanceTest({
  shortName: 'GatewayInvalidFrontendClientCertificateValidation',
  description: "Gateway's should reject invalid Client Certificate Validation Config",
  features: ['Gateway', 'HTTPRoute', 'ReferenceGrant', 'GatewayFrontendClientCertificateValidation'],
  manifests: ['tests/gateway-with-invalid-clientcertificate-validation.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'gateway-with-invalid-client-cert-validation' };
    for (const [name, listener, conditions] of cases) {
      it(`Validate status for invalid client certificate configuration: ${name}`, () =>
        gatewayListenerMustHaveConditions(s.kube, s.timeoutConfig, gwNN, listener, conditions));
    }
  },
});
