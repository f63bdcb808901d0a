// Upstream conformance test ListenerSetProtocolConflict (Gateway API v1.6.1
// conformance/tests/listenerset-protocol-conflict.go), with its manifest and expectations: listener precedence (the
// Gateway's own listeners first, then ListenerSets oldest first, then by namespace/name; GEP-1713) decides which of
// two conflicting listeners is accepted; a ListenerSet with no valid listener left is not accepted.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  acceptedListenerConditions,
  type Cond,
  gatewayListenersMustHaveConditions,
  gatewayMustHaveAttachedListeners,
  gatewayMustHaveCondition,
  listenerSetListenersMustHaveConditions,
  listenerSetMustHaveCondition,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const conflicted: Cond[] = [
  { type: 'Accepted', status: 'False', reason: 'ProtocolConflict' },
  { type: 'Programmed', status: 'False', reason: 'ProtocolConflict' },
  { type: 'Conflicted', status: 'True', reason: 'ProtocolConflict' },
];

runConformanceTest({
  shortName: 'ListenerSetProtocolConflict',
  description: 'Validate Listener Precedence when a ListenerSet listener has a protocol conflict',
  features: ['Gateway', 'ListenerSet'],
  manifests: ['tests/listenerset-protocol-conflict.yaml'],
  test(s) {
    it('listeners, ListenerSets and the Gateway have the statuses listener precedence gives', async () => {
      const tc = s.timeoutConfig;
      await namespacesMustBeReady(s.kube, tc, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-with-listenerset-protocol-conflict' };
      await gatewayMustHaveCondition(s.kube, tc, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayListenersMustHaveConditions(s.kube, tc, gwNN, acceptedListenerConditions(), ['gateway-listener']);
      // The first conflicted listener is accepted based on Listener precedence
      await gatewayListenersMustHaveConditions(s.kube, tc, gwNN, acceptedListenerConditions(), [
        'protocol-conflict-with-gateway-listener',
      ]);
      await gatewayMustHaveAttachedListeners(s.kube, tc, gwNN, 2);

      const acceptedSet = async (name: string, valid: string, conflictedListener: string, alsoValid?: string) => {
        const lsNN = { namespace: ns, name };
        await listenerSetMustHaveCondition(s.kube, tc, lsNN, { type: 'Accepted', status: 'True' });
        await listenerSetMustHaveCondition(s.kube, tc, lsNN, {
          type: 'Programmed',
          status: 'True',
          reason: 'Programmed',
        });
        await listenerSetListenersMustHaveConditions(s.kube, tc, lsNN, acceptedListenerConditions(), [valid]);
        await listenerSetListenersMustHaveConditions(s.kube, tc, lsNN, conflicted, [conflictedListener]);
        if (alsoValid)
          await listenerSetListenersMustHaveConditions(s.kube, tc, lsNN, acceptedListenerConditions(), [alsoValid]);
      };
      const refusedSet = async (name: string, conflictedListener: string) => {
        const lsNN = { namespace: ns, name };
        for (const type of ['Accepted', 'Programmed'])
          await listenerSetMustHaveCondition(s.kube, tc, lsNN, { type, status: 'False', reason: 'ListenersNotValid' });
        await listenerSetListenersMustHaveConditions(s.kube, tc, lsNN, conflicted, [conflictedListener]);
      };
      await acceptedSet(
        'listenerset-with-protocol-conflict-with-gateway-1',
        'listener-set-1-listener',
        'protocol-conflict-with-gateway-listener',
        'protocol-conflict-with-listener-set-listener',
      );
      await refusedSet('listenerset-with-protocol-conflict-with-gateway-2', 'protocol-conflict-with-gateway-listener');
      await acceptedSet(
        'listenerset-with-protocol-conflict-with-listener-set-1',
        'listener-set-2-listener',
        'protocol-conflict-with-listener-set-listener',
      );
      await refusedSet(
        'listenerset-with-protocol-conflict-with-listener-set-2',
        'protocol-conflict-with-listener-set-listener',
      );
    });
  },
});
