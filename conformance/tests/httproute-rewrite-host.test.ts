// Upstream conformance test HTTPRouteRewriteHost (Gateway API v1.6.1 conformance/tests/httproute-rewrite-host.go),
// with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRewriteHost',
  description: 'An HTTPRoute with hostname rewrite filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteHostRewrite'],
  manifests: ['tests/httproute-rewrite-host.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'rewrite-host' },
    ]);
    httpCases(s, addr, [
      {
        request: { path: '/one', host: 'rewrite.example' },
        expectedRequest: { path: '/one', host: 'one.example.org' },
        backend: 'infra-backend-v1',
        namespace: ns,
      },
      {
        request: { path: '/two', host: 'rewrite.example' },
        expectedRequest: { path: '/two', host: 'example.org' },
        backend: 'infra-backend-v2',
        namespace: ns,
      },
      {
        request: {
          path: '/rewrite-host-and-modify-headers',
          host: 'rewrite.example',
          headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
        },
        expectedRequest: {
          path: '/rewrite-host-and-modify-headers',
          host: 'test.example.org',
          headers: {
            'X-Header-Add': 'header-val-1',
            'X-Header-Add-Append': 'append-val-1,header-val-2',
            'X-Header-Set': 'set-overwrites-values',
          },
          absentHeaders: ['X-Header-Remove'],
        },
        backend: 'infra-backend-v2',
        namespace: ns,
      },
    ]);
  },
});
