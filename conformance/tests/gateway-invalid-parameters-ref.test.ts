// Upstream conformance test GatewayInvalidParametersRef (Gateway API v1.6.1
// conformance/tests/gateway-invalid-parameters-ref.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayMustHaveCondition, mustHaveLatestConditions } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayInvalidParametersRef',
  description:
    'A Gateway referencing an invalid or non-existent parametersRef should set the Accepted condition to False with reason InvalidParameters.',
  features: ['Gateway'],
  manifests: ['tests/gateway-invalid-parameters-ref.yaml'],
  test(s) {
    it('Gateway is not Accepted: InvalidParameters', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-invalid-parameters-ref' };
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'InvalidParameters',
      });
    });
  },
});
