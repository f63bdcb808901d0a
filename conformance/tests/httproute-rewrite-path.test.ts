// Upstream conformance test HTTPRouteRewritePath (Gateway API v1.6.1 conformance/tests/httproute-rewrite-path.go),
// with its manifest and expectations.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const rewritten = (path: string, to: string): ExpectedResponse => ({
  request: { path },
  expectedRequest: { path: to },
  backend: 'infra-backend-v1',
  namespace: ns,
});
const withHeaders = (path: string, to: string): ExpectedResponse => ({
  request: {
    path,
    headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1', 'X-Header-Set': 'set-val' },
  },
  expectedRequest: {
    path: to,
    headers: {
      'X-Header-Add': 'header-val-1',
      'X-Header-Add-Append': 'append-val-1,header-val-2',
      'X-Header-Set': 'set-overwrites-values',
    },
    absentHeaders: ['X-Header-Remove'],
  },
  backend: 'infra-backend-v1',
  namespace: ns,
});

runConformanceTest({
  shortName: 'HTTPRouteRewritePath',
  description: 'An HTTPRoute with path rewrite filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRoutePathRewrite'],
  manifests: ['tests/httproute-rewrite-path.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'rewrite-path' },
    ]);
    httpCases(s, addr, [
      rewritten('/prefix/one/two', '/one/two'),
      rewritten('/strip-prefix/three', '/three'),
      rewritten('/strip-prefix', '/'),
      rewritten('/full/one/two', '/one'),
      withHeaders('/full/rewrite-path-and-modify-headers/test', '/test'),
      withHeaders('/prefix/rewrite-path-and-modify-headers/one', '/prefix/one'),
    ]);
  },
});
