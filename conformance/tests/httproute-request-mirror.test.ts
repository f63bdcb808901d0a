// Upstream conformance test HTTPRouteRequestMirror (Gateway API v1.6.1 conformance/tests/httproute-request-mirror.go),
// with its manifest and expectations: the request answered by infra-backend-v1 and mirrored to infra-backend-v2 (seen
// in its echo log), with and without request header modifiers.
import { mirrorCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRequestMirror',
  description: 'An HTTPRoute with request mirror filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror'],
  manifests: ['tests/httproute-request-mirror.yaml'],
  test(s) {
    const addr = routesAccepted(
      s,
      { namespace: ns, name: 'same-namespace' },
      [{ namespace: ns, name: 'request-mirror' }],
      {
        resolvedRefs: false,
      },
    );
    const mirroredTo = [{ name: 'infra-backend-v2', namespace: ns }];
    mirrorCases(s, addr, [
      {
        request: { path: '/mirror' },
        expectedRequest: { path: '/mirror' },
        backend: 'infra-backend-v1',
        mirroredTo,
        namespace: ns,
      },
      {
        request: {
          path: '/mirror-and-modify-headers',
          headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
        },
        expectedRequest: {
          path: '/mirror-and-modify-headers',
          headers: {
            'X-Header-Add': 'header-val-1',
            'X-Header-Add-Append': 'append-val-1,header-val-2',
            'X-Header-Set': 'set-overwrites-values',
          },
          absentHeaders: ['X-Header-Remove'],
        },
        namespace: ns,
        backend: 'infra-backend-v1',
        mirroredTo,
      },
    ]);
  },
});
