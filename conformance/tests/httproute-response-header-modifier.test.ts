// Upstream conformance test HTTPRouteResponseHeaderModifier (Gateway API v1.6.1
// conformance/tests/httproute-response-header-modifier.go), with its manifest and expectations: the backend sets
// response headers (X-Echo-Set-Header) that the route's ResponseHeaderModifier filters then change.
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const v1 = { backend: 'infra-backend-v1', namespace: ns };
const cases: ExpectedResponse[] = [
  {
    request: { path: '/set' },
    backendSetResponseHeaders: { 'Some-Other-Header': 'val' },
    response: { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
    ...v1,
  },
  {
    request: { path: '/set' },
    backendSetResponseHeaders: { 'Some-Other-Header': 'val', 'X-Header-Set': 'some-other-value' },
    response: { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
    ...v1,
  },
  {
    request: { path: '/add' },
    backendSetResponseHeaders: { 'Some-Other-Header': 'val' },
    response: { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'add-appends-values' } },
    ...v1,
  },
  {
    request: { path: '/add' },
    backendSetResponseHeaders: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value' },
    response: { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value,add-appends-values' } },
    ...v1,
  },
  {
    request: { path: '/remove' },
    backendSetResponseHeaders: { 'X-Header-Remove': 'val' },
    response: { absentHeaders: ['X-Header-Remove'] },
    ...v1,
  },
  {
    request: { path: '/multiple' },
    backendSetResponseHeaders: {
      'X-Header-Set-2': 'set-val-2',
      'X-Header-Add-2': 'add-val-2',
      'X-Header-Remove-2': 'remove-val-2',
      'Another-Header': 'another-header-val',
      'X-Header-Remove-1': 'val',
    },
    response: {
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
    ...v1,
  },
  {
    request: { path: '/case-insensitivity' },
    backendSetResponseHeaders: {
      'x-header-set': 'original-val-set',
      'x-header-add': 'original-val-add',
      'x-header-remove': 'original-val-remove',
      'Another-Header': 'another-header-val',
    },
    response: {
      headers: {
        'X-Header-Set': 'header-set',
        'X-Header-Add': 'original-val-add,header-add',
        'X-Lowercase-Add': 'lowercase-add',
        'X-Mixedcase-Add-1': 'mixedcase-add-1',
        'X-Mixedcase-Add-2': 'mixedcase-add-2',
        'X-Uppercase-Add': 'uppercase-add',
        'Another-Header': 'another-header-val',
      },
      absentHeaders: ['x-header-remove', 'X-Header-Remove'],
    },
    ...v1,
  },
  {
    request: {
      path: '/response-and-request-header-modifiers',
      headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1', 'X-Header-Echo': 'echo' },
    },
    backendSetResponseHeaders: {
      'X-Header-Set-2': 'set-val-2',
      'X-Header-Add-2': 'add-val-2',
      'X-Header-Remove-2': 'remove-val-2',
      'Another-Header': 'another-header-val',
      'X-Header-Remove-1': 'remove-val-1',
      'X-Header-Echo': 'echo',
    },
    expectedRequest: {
      path: '/response-and-request-header-modifiers',
      headers: {
        'X-Header-Add': 'header-val-1',
        'X-Header-Set': 'set-overwrites-values',
        'X-Header-Add-Append': 'append-val-1,header-val-2',
        'X-Header-Echo': 'echo',
      },
      absentHeaders: ['X-Header-Remove'],
    },
    response: {
      headers: {
        'X-Header-Set-1': 'header-set-1',
        'X-Header-Set-2': 'header-set-2',
        'X-Header-Add-1': 'header-add-1',
        'X-Header-Add-2': 'add-val-2,header-add-2',
        'Another-Header': 'another-header-val',
        'X-Header-Echo': 'echo',
      },
      absentHeaders: ['X-Header-Remove-1', 'X-Header-Remove-2'],
    },
    ...v1,
  },
];

runConformanceTest({
  shortName: 'HTTPRouteResponseHeaderModifier',
  description: 'An HTTPRoute has response header modifier filters applied correctly',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteResponseHeaderModification'],
  manifests: ['tests/httproute-response-header-modifier.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'response-header-modifier' },
    ]);
    httpCases(s, addr, cases);
  },
});
