// Upstream conformance test GatewayOptionalAddressValue (Gateway API v1.6.1
// conformance/tests/gateway-optional-address-value.go, provisional), with its manifest and expectations: an address
// of type IPAddress without a value asks for any address of that type, which the load balancer assigns
// (system/controlplane/ir/static-addresses.ts).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { mustHaveLatestConditions, namespacesMustBeReady, waitForGatewayAddress } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayOptionalAddressValue',
  description: 'Check Gateway Support for GatewayAddressEmpty feature',
  features: ['Gateway', 'GatewayAddressEmpty'],
  provisional: true,
  manifests: ['tests/gateway-optional-address-value.yaml'],
  test(s) {
    it('the Gateway gets an address assigned', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-without-address-value' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [INFRA_NS]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: ['http'] });
    });
  },
});
