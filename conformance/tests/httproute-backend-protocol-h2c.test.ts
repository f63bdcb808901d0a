// Upstream conformance test HTTPRouteBackendProtocolH2C (Gateway API v1.6.1
// conformance/tests/httproute-backend-protocol-h2c.go), with its manifest and expectations: a backendRef to a Service
// port with appProtocol kubernetes.io/h2c (infra-backend-v1:8081 → the echo's h2c port 3001, which refuses HTTP/1.1)
// is reached by an HTTP/2 prior-knowledge request (h2c downstream, HTTP/2 upstream).
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { H2C_PRIOR_KNOWLEDGE } from '../utils/roundtrip-h2.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteBackendProtocolH2C',
  description: 'A HTTPRoute with a BackendRef that has an appProtocol kubernetes.io/h2c should be functional',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendProtocolH2C'],
  manifests: ['tests/httproute-backend-protocol-h2c.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'backend-protocol-h2c' },
    ]);
    // Not the h2c upgrade mechanism: it is deprecated (RFC 9113 §3.1), as upstream says.
    httpCases(s, addr, [
      {
        testCaseName: 'http2 prior knowledge request should reach backend',
        request: { path: '/', protocol: H2C_PRIOR_KNOWLEDGE },
        response: { statusCode: 200 },
        backend: 'infra-backend-v1',
        namespace: ns,
      },
    ]);
  },
});
