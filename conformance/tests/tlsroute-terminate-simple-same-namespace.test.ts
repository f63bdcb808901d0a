// Upstream conformance test TLSRouteTerminateSimpleSameNamespace (Gateway API v1.6.1 conformance/tests/
// tlsroute-terminate-simple-same-namespace.go, provisional), with its manifest and expectations: a TLS Terminate
// listener; the gateway terminates TLS and tcp-backend's plaintext port answers (IS_TLS false).
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayAndTLSRoutesMustBeAccepted, namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TLSRouteTerminateSimpleSameNamespace',
  description:
    'A single TLSRoute in the gateway-conformance-infra namespace attaches to a Gateway using Terminate mode in the same namespace',
  features: ['Gateway', 'TLSRoute', 'TLSRouteModeTerminate'],
  provisional: true,
  manifests: ['tests/tlsroute-terminate-simple-same-namespace.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'tlsroute-terminated-test' };
    const gwNN = { namespace: ns, name: 'gateway-tlsroute-terminate' };
    let gwAddr = '';
    let hostnames: string[] = [];
    let ca = '';
    it('namespaces ready, Gateway and TLSRoute accepted, CA read', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      ({ addr: gwAddr, hostnames } = await gatewayAndTLSRoutesMustBeAccepted(
        s.kube,
        s.timeoutConfig,
        s.controllerName,
        gwNN,
        [routeNN],
      ));
      if (hostnames.length !== 1)
        throw new Error(`unexpected error in test configuration, found ${hostnames.length} hostnames`);
      const cm = await s.kube.get('v1', 'ConfigMap', 'tls-checks-ca-certificate', ns);
      ca = cm?.data?.['ca.crt'] ?? '';
      if (!ca) throw new Error(`ca.crt not found in configmap: ${ns}/tls-checks-ca-certificate`);
    });
    it('Simple TLS request matching terminated TLSRoute should reach tcp-backend with plain text', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTCPRequestAndExpectEventuallyValidResponse(
        s.timeoutConfig,
        gwAddr,
        { backendIsTLS: false, backend: 'tcp-backend', namespace: ns },
        { serverName: hostnames[0], serverCertificate: ca },
      );
    });
  },
});
