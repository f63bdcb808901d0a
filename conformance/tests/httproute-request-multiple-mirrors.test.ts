// Upstream conformance test HTTPRouteRequestMultipleMirrors (Gateway API v1.6.1
// conformance/tests/httproute-request-multiple-mirrors.go), with its manifest and expectations: the request answered
// by infra-backend-v1 and mirrored to infra-backend-v2 and -v3 (seen in their echo logs).
import { mirrorCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRequestMultipleMirrors',
  description: 'An HTTPRoute with multiple request mirror filters',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors'],
  manifests: ['tests/httproute-request-multiple-mirrors.yaml'],
  test(s) {
    const addr = routesAccepted(
      s,
      { namespace: ns, name: 'same-namespace' },
      [{ namespace: ns, name: 'request-multiple-mirrors' }],
      { resolvedRefs: false },
    );
    const mirroredTo = [
      { name: 'infra-backend-v2', namespace: ns },
      { name: 'infra-backend-v3', namespace: ns },
    ];
    mirrorCases(s, addr, [
      {
        request: { path: '/multi-mirror' },
        expectedRequest: { path: '/multi-mirror' },
        backend: 'infra-backend-v1',
        mirroredTo,
        namespace: ns,
      },
      {
        request: {
          path: '/multi-mirror-and-modify-request-headers',
          headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
        },
        expectedRequest: {
          path: '/multi-mirror-and-modify-request-headers',
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
