// Upstream conformance test HTTPRouteRequestHeaderModifier (Gateway API v1.6.1
// conformance/tests/httproute-request-header-modifier.go), with its manifest and expectations. The same file's
// HTTPRouteBackendRequestHeaderModifier (feature HTTPRouteBackendRequestHeaderModification) runs the same cases
// against httproute-request-header-modifier-backend.yaml.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import type { Suite } from '../utils/suite.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const v1 = 'infra-backend-v1';
const cases: ExpectedResponse[] = [
  {
    request: { path: '/set', headers: { 'Some-Other-Header': 'val' } },
    expectedRequest: { path: '/set', headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
    backend: v1,
    namespace: ns,
  },
  {
    request: { path: '/set', headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'some-other-value' } },
    expectedRequest: { path: '/set', headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
    backend: v1,
    namespace: ns,
  },
  {
    request: { path: '/add', headers: { 'Some-Other-Header': 'val' } },
    expectedRequest: { path: '/add', headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'add-appends-values' } },
    backend: v1,
    namespace: ns,
  },
  {
    request: { path: '/add', headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value' } },
    expectedRequest: {
      path: '/add',
      headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value,add-appends-values' },
    },
    backend: v1,
    namespace: ns,
  },
  {
    request: { path: '/remove', headers: { 'X-Header-Remove': 'val' } },
    expectedRequest: { path: '/remove', absentHeaders: ['X-Header-Remove'] },
    backend: v1,
    namespace: ns,
  },
  {
    request: {
      path: '/multiple',
      headers: {
        'X-Header-Set-2': 'set-val-2',
        'X-Header-Add-2': 'add-val-2',
        'X-Header-Remove-2': 'remove-val-2',
        'Another-Header': 'another-header-val',
      },
    },
    expectedRequest: {
      path: '/multiple',
      headers: {
        'X-Header-Set-1': 'header-set-1',
        'X-Header-Set-2': 'header-set-2',
        'X-Header-Add-1': 'header-add-1',
        'X-Header-Add-2': 'add-val-2,header-add-2',
        'X-Header-Add-3': 'header-add-3',
        'Another-Header': 'another-header-val',
      },
      absentHeaders: ['X-Header-Remove-1', 'X-Header-Remove-2'],
    },
    backend: v1,
    namespace: ns,
  },
  {
    request: {
      path: '/case-insensitivity',
      headers: {
        'x-header-set': 'original-val-set',
        'x-header-add': 'original-val-add',
        'x-header-remove': 'original-val-remove',
        'Another-Header': 'another-header-val',
      },
    },
    expectedRequest: {
      path: '/case-insensitivity',
      headers: {
        'X-Header-Set': 'header-set',
        'X-Header-Add': 'original-val-add,header-add',
        'Another-Header': 'another-header-val',
      },
      absentHeaders: ['x-header-remove', 'X-Header-Remove'],
    },
    backend: v1,
    namespace: ns,
  },
];

function test(s: Suite): void {
  const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
    { namespace: ns, name: 'request-header-modifier' },
  ]);
  httpCases(s, addr, cases);
}

runConformanceTest({
  shortName: 'HTTPRouteRequestHeaderModifier',
  description: 'An HTTPRoute has request header modifier filters applied correctly',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-request-header-modifier.yaml'],
  test,
});

runConformanceTest({
  shortName: 'HTTPRouteBackendRequestHeaderModifier',
  description: 'An HTTPRoute backend has request header modifier filters applied correctly',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteBackendRequestHeaderModification'],
  manifests: ['tests/httproute-request-header-modifier-backend.yaml'],
  test,
});
