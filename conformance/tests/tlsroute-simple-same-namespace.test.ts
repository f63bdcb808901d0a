// Upstream conformance test TLSRouteSimpleSameNamespace (Gateway API v1.6.1 conformance/tests/
// tlsroute-simple-same-namespace.go), with its manifest and expectations: a TLS Passthrough listener, the TLS
// connection by SNI reaching tcp-backend's TLS echo (IS_TLS true, the SNI it saw), the CA from tls-checks-ca-certificate.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayAndTLSRoutesMustBeAccepted, namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTCPRequestAndExpectEventuallyValidResponse } from '../utils/tcp.ts';

runConformanceTest({
  shortName: 'TLSRouteSimpleSameNamespace',
  description:
    'A single TLSRoute in the gateway-conformance-infra namespace attaches to a Gateway in the same namespace',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-simple-same-namespace.yaml'],
  test(s) {
    const routeNN = { namespace: ns, name: 'gateway-conformance-infra-test' };
    const gwNN = { namespace: ns, name: 'gateway-tlsroute' };
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
    it('Simple TLS request matching TLSRoute should reach infra-backend', async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTCPRequestAndExpectEventuallyValidResponse(
        s.timeoutConfig,
        gwAddr,
        { backendIsTLS: true, backend: 'tcp-backend', namespace: ns, hostname: hostnames[0] },
        { serverName: hostnames[0], serverCertificate: ca },
      );
    });
  },
});
