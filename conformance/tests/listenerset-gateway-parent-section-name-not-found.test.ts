// Upstream conformance test ListenerSetGatewayParentSectionNameNotFound (Gateway API v1.6.1
// conformance/tests/listenerset-gateway-parent-section-name-not-found.go), with its manifest and expectations: a
// parentRef of kind Gateway cannot reach a ListenerSet's listener by its sectionName.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  gatewayMustHaveAttachedListeners,
  gatewayMustHaveCondition,
  httpRouteMustHaveCondition,
  namespacesMustBeReady,
  routesAndParentMustBeAccepted,
  waitForGatewayAddress,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'ListenerSetGatewayParentSectionNameNotFound',
  description: 'A Route must not be able to find a ListenerSet sectionName using a Gateway parentRef',
  features: ['Gateway', 'ListenerSet', 'HTTPRoute'],
  manifests: ['tests/listenerset-gateway-parent-section-name-not-found.yaml'],
  test(s) {
    it('the route via the Gateway is NoMatchingParent, the one via the ListenerSet is served', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const gwNN = { namespace: ns, name: 'gateway-section-name' };
      const addr = await waitForGatewayAddress(s.kube, s.timeoutConfig, { ...gwNN, listenerNames: ['gw-listener'] });
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      await gatewayMustHaveAttachedListeners(s.kube, s.timeoutConfig, gwNN, 1);
      await routesAndParentMustBeAccepted(
        s.kube,
        s.timeoutConfig,
        s.controllerName,
        { namespace: ns, name: 'listenerset-section-name', kind: 'ListenerSet' },
        [{ namespace: ns, name: 'route-via-listenerset' }],
      );
      await httpRouteMustHaveCondition(s.kube, s.timeoutConfig, { namespace: ns, name: 'route-via-gateway' }, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'NoMatchingParent',
      });
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr, {
        request: { host: 'ls-section-name.com', path: '/goodsection' },
        backend: 'infra-backend-v1',
        namespace: ns,
      });
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr, {
        request: { host: 'gw-section.com', path: '/badsection' },
        response: { statusCode: 404 },
      });
    });
  },
});
