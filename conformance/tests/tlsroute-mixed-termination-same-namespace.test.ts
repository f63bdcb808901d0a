// Upstream conformance test TLSRouteMixedTerminationSameNamespace (Gateway API v1.6.1 conformance/tests/
// tlsroute-mixed-termination-same-namespace.go, provisional), with its manifest and expectations: Terminate and
// Passthrough listeners on one port, each serving its route. Needs TLSRouteModeMixed, which gwlab does not declare
// (such listeners get ProtocolConflict: TLSRouteListenerMixedTerminationNotSupported), so it is skipped.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  GROUP,
  gatewayAndTLSRoutesMustBeAccepted,
  gatewayStatusMustHaveListeners,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

const accepted = [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted' }];

runConformanceTest({
  shortName: 'TLSRouteMixedTerminationSameNamespace',
  description: 'A Gateway with 2 TLS Listeners on different modes, on the same port must route the traffic correctly',
  features: ['Gateway', 'TLSRoute', 'TLSRouteModeTerminate', 'TLSRouteModeMixed'],
  provisional: true,
  manifests: ['tests/tlsroute-mixed-termination-same-namespace.yaml'],
  test(s) {
    const terminateNN = { namespace: ns, name: 'gateway-conformance-mixed-terminateroute' };
    const passthroughNN = { namespace: ns, name: 'gateway-conformance-mixed-passthroughroute' };
    const gwNN = { namespace: ns, name: 'gateway-tlsroute-mixed-termination' };
    let gwAddr = '';
    let passthroughHost = '';
    let terminateHost = '';
    let ca = '';
    it('Gateway and TLSRoutes accepted, both listeners Accepted with one route each', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const p = await gatewayAndTLSRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [
        passthroughNN,
      ]);
      gwAddr = p.addr;
      const kinds = [{ group: GROUP, kind: 'TLSRoute' }];
      await gatewayStatusMustHaveListeners(s.kube, s.timeoutConfig, gwNN, [
        { name: 'tls-terminate', supportedKinds: kinds, conditions: accepted, attachedRoutes: 1 },
        { name: 'tls-passthrough', supportedKinds: kinds, conditions: accepted, attachedRoutes: 1 },
      ]);
      if (p.hostnames.length !== 1) throw new Error(`found ${p.hostnames.length} passthrough hostnames`);
      passthroughHost = p.hostnames[0];
      const t = await gatewayAndTLSRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [terminateNN]);
      if (t.hostnames.length !== 1) throw new Error(`found ${t.hostnames.length} terminate hostnames`);
      terminateHost = t.hostnames[0];
      const cm = await s.kube.get('v1', 'ConfigMap', 'tls-checks-ca-certificate', ns);
      ca = cm?.data?.['ca.crt'] ?? '';
      if (!ca) throw new Error(`ca.crt not found in configmap: ${ns}/tls-checks-ca-certificate`);
    });
    it('Simple TLS request matching terminated TLSRoute should reach tcp-backend unencrypted', () =>
      makeTCPRequestAndExpectEventuallyValidResponse(
        s.timeoutConfig,
        gwAddr,
        { backendIsTLS: false, backend: 'tcp-backend', namespace: ns },
        { serverName: terminateHost, serverCertificate: ca },
      ));
    it('Simple TLS request matching TLSRoute Passthrough should reach infra-backend', () =>
      makeTCPRequestAndExpectEventuallyValidResponse(
        s.timeoutConfig,
        gwAddr,
        { backendIsTLS: true, backend: 'tcp-backend', namespace: ns, hostname: passthroughHost },
        { serverName: passthroughHost, serverCertificate: ca },
      ));
  },
});
