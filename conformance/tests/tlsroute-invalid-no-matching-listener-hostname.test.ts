// Upstream conformance test TLSRouteInvalidNoMatchingListenerHostname (Gateway API v1.6.1 conformance/tests/
// tlsroute-invalid-no-matching-listener-hostname.go), with its manifest and expectations.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  gatewayMustHaveZeroRoutes,
  httpRouteMustHaveNoAcceptedParents,
  namespacesMustBeReady,
  routeMustHaveCondition,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'TLSRouteInvalidNoMatchingListenerHostname',
  description:
    'A TLSRoute with a hostname that does not match the Gateway listener hostname should set Accepted=False with Reason=NoMatchingListenerHostname',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-invalid-no-matching-listener-hostname.yaml'],
  test(s) {
    const route1 = { namespace: ns, name: 'tlsroute-hostname-mismatch-1' };
    const route2 = { namespace: ns, name: 'tlsroute-hostname-mismatch-2' };
    const exactGw = { namespace: ns, name: 'gateway-tls-exact-hostname' };
    const wildcardGw = { namespace: ns, name: 'gateway-tls-wildcard-hostname' };
    const accepted = { type: 'Accepted', status: 'False' as const, reason: 'NoMatchingListenerHostname' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it('TLSRoute 1 has Accepted=False for exact hostname Gateway', () =>
      routeMustHaveCondition(s.kube, s.timeoutConfig, route1, exactGw, accepted, 'TLSRoute'));
    it('TLSRoute 2 has Accepted=False for wildcard hostname Gateway', () =>
      routeMustHaveCondition(s.kube, s.timeoutConfig, route2, wildcardGw, accepted, 'TLSRoute'));
    it('TLSRoute 1 must have no accepted parents', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, route1, 'TLSRoute'));
    it('TLSRoute 2 must have no accepted parents', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, route2, 'TLSRoute'));
    it('Exact hostname Gateway must have 0 Routes attached', () =>
      gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, exactGw));
    it('Wildcard hostname Gateway must have 0 Routes attached', () =>
      gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, wildcardGw));
  },
});
