// Upstream conformance test TLSRouteInvalidNoMatchingListener (Gateway API v1.6.1 conformance/tests/
// tlsroute-invalid-no-matching-listener.go), with its manifest and expectations: TLSRoutes naming HTTP and HTTPS
// listeners are NotAllowedByListeners, one naming a missing sectionName NoMatchingParent; none attached.
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
  shortName: 'TLSRouteInvalidNoMatchingListener',
  description: 'A TLSRoute should set Accepted=False when attaching to a Gateway with no compatible TLS listener',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-invalid-no-matching-listener.yaml'],
  test(s) {
    const httpRoute = { namespace: ns, name: 'tlsroute-not-allowed-protocol-http' };
    const httpsRoute = { namespace: ns, name: 'tlsroute-not-allowed-protocol-https' };
    const sectionRoute = { namespace: ns, name: 'tlsroute-no-matching-section-name' };
    const gwPassthrough = { namespace: ns, name: 'gateway-tlsroute-tls-passthrough-only' };
    const gwHTTP = { namespace: ns, name: 'gateway-tlsroute-http-only' };
    const gwHTTPS = { namespace: ns, name: 'gateway-tlsroute-https-only' };
    const notAllowed = { type: 'Accepted', status: 'False' as const, reason: 'NotAllowedByListeners' };
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    it('TLSRoute rejected when listener protocol is HTTP', () =>
      routeMustHaveCondition(s.kube, s.timeoutConfig, httpRoute, gwHTTP, notAllowed, 'TLSRoute'));
    it('TLSRoute rejected when listener protocol is HTTPS', () =>
      routeMustHaveCondition(s.kube, s.timeoutConfig, httpsRoute, gwHTTPS, notAllowed, 'TLSRoute'));
    it('TLSRoute rejected when sectionName not found', () =>
      routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        sectionRoute,
        gwPassthrough,
        { type: 'Accepted', status: 'False', reason: 'NoMatchingParent' },
        'TLSRoute',
      ));
    it('TLSRoute (HTTP listener) should not have Parents accepted', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, httpRoute, 'TLSRoute'));
    it('TLSRoute (HTTPS listener) should not have Parents accepted', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, httpsRoute, 'TLSRoute'));
    it('TLSRoute (wrong sectionName) should not have Parents accepted', () =>
      httpRouteMustHaveNoAcceptedParents(s.kube, s.timeoutConfig, sectionRoute, 'TLSRoute'));
    it('Gateway HTTP-only should have 0 Routes attached', () =>
      gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, gwHTTP));
    it('Gateway HTTPS-only should have 0 Routes attached', () =>
      gatewayMustHaveZeroRoutes(s.kube, s.timeoutConfig, gwHTTPS));
  },
});
