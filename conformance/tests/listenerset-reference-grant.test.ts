// Upstream conformance test ListenerSetReferenceGrant (Gateway API v1.6.1
// conformance/tests/listenerset-reference-grant.go), with its manifest and expectations: a ListenerSet listener's
// certificateRef to another namespace needs a ReferenceGrant from kind ListenerSet (one from kind Gateway is not
// enough); without it the listener is ResolvedRefs False (RefNotPermitted) and the set, with no valid listener, is not
// accepted (ListenersNotValid).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  type Cond,
  gatewayMustHaveCondition,
  listenerSetListenersMustHaveConditions,
  listenerSetMustHaveCondition,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const refPermitted: Cond[] = [{ type: 'ResolvedRefs', status: 'True' }];
const refNotPermitted: Cond[] = [{ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' }];

runConformanceTest({
  shortName: 'ListenerSetReferenceGrant',
  description: 'ListenerSet with reference grant support',
  features: ['Gateway', 'ListenerSet', 'ReferenceGrant'],
  manifests: ['tests/listenerset-reference-grant.yaml'],
  test(s) {
    it('the granted ListenerSet is accepted, the other refused (RefNotPermitted)', async () => {
      const tc = s.timeoutConfig;
      await namespacesMustBeReady(s.kube, tc, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-with-listener-sets-test-reference-grant' };
      await gatewayMustHaveCondition(s.kube, tc, gwNN, { type: 'Accepted', status: 'True' });

      let lsNN = { namespace: ns, name: 'listenerset-with-reference-grant' };
      await listenerSetMustHaveCondition(s.kube, tc, lsNN, { type: 'Accepted', status: 'True' });
      await listenerSetMustHaveCondition(s.kube, tc, lsNN, { type: 'Programmed', status: 'True' });
      await listenerSetListenersMustHaveConditions(s.kube, tc, lsNN, refPermitted, [
        'listenerset-with-reference-grant-listener',
      ]);

      lsNN = {
        namespace: 'gateway-api-listener-sets-test-reference-grant-ns',
        name: 'listenerset-without-reference-grant',
      };
      for (const type of ['Accepted', 'Programmed'])
        await listenerSetMustHaveCondition(s.kube, tc, lsNN, { type, status: 'False', reason: 'ListenersNotValid' });
      await listenerSetListenersMustHaveConditions(s.kube, tc, lsNN, refNotPermitted, [
        'listenerset-without-reference-grant-listener',
      ]);
    });
  },
});
