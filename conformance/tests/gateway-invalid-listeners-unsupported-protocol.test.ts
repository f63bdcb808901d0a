// Upstream conformance test GatewayListenerUnsupportedProtocol (Gateway API v1.6.1
// conformance/tests/gateway-invalid-listeners-unsupported-protocol.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  GROUP,
  gatewayMustHaveCondition,
  gatewayStatusMustHaveListeners,
  mustHaveLatestConditions,
} from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

const invalid = {
  name: 'invalid',
  supportedKinds: [],
  conditions: [{ type: 'Accepted', status: 'False' as const, reason: 'UnsupportedProtocol' }],
  attachedRoutes: 0,
};

runConformanceTest({
  shortName: 'GatewayListenerUnsupportedProtocol',
  description:
    'A Gateway should set the Accepted condition to False with reason UnsupportedProtocol on listeners whose protocol is not supported. The Gateway itself should only be Accepted if at least one of its listeners is accepted.',
  features: ['Gateway'],
  manifests: ['tests/gateway-invalid-listeners-unsupported-protocol.yaml'],
  test(s) {
    it.concurrent('Gateway with no accepted listeners should not be accepted and the listener should have the Accepted condition set to False with reason UnsupportedProtocol', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-only-unsupported-protocols' };
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'ListenersNotValid',
      });
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [invalid]);
    });
    it.concurrent('Gateway with at least one accepted listeners should be accepted and the listeners should have the Accepted condition set accordingly', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-supported-and-unsupported-protocols' };
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, {
        type: 'Accepted',
        status: 'True',
        reason: 'ListenersNotValid',
      });
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        {
          name: 'http',
          supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
          conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
          attachedRoutes: 0,
        },
        invalid,
      ]);
    });
  },
});
