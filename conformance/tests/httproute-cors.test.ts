// Upstream conformance test HTTPRouteCORS (Gateway API v1.6.1 conformance/tests/httproute-cors.go), with its manifest
// and expectations: preflights and simple requests against four routes with the CORS filter (exact and wildcard
// origins, `*` methods and headers with and without credentials). Preflights are answered by the gateway, so their
// expected request is the empty one upstream sets ("the response body is empty because the request is a preflight").
import { it } from 'vitest';
import { httpCases, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import { gatewayAndRoutesMustBeAccepted, httpRouteMustHaveResolvedRefsConditionsTrue } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const preflightSeen = { method: 'OPTIONS', path: '', host: '' };
const preflight = (
  testCaseName: string,
  path: string,
  headers: Record<string, string>,
  response: ExpectedResponse['response'],
): ExpectedResponse => ({
  testCaseName,
  request: { path, method: 'OPTIONS', headers },
  expectedRequest: preflightSeen,
  namespace: '',
  response,
});
const simple = (
  testCaseName: string,
  path: string,
  method: string,
  headers: Record<string, string>,
  response: ExpectedResponse['response'],
): ExpectedResponse => ({ testCaseName, namespace: ns, request: { path, method, headers }, response });

const fullAllow = (origin: string) => ({
  statusCodes: [200, 204],
  validHeaderValues: {
    'access-control-allow-origin': [origin],
    'access-control-allow-methods': ['GET, OPTIONS', 'OPTIONS, GET'],
    'access-control-allow-headers': ['x-header-1, x-header-2', 'x-header-2, x-header-1'],
    'access-control-expose-headers': ['x-header-3, x-header-4', 'x-header-4, x-header-3'],
    'access-control-max-age': ['3600'],
    'access-control-allow-credentials': ['true'],
  },
  ignoreWhitespace: true,
});
const askGet = (origin: string) => ({
  Origin: origin,
  'access-control-request-method': 'GET',
  'access-control-request-headers': 'x-header-1, x-header-2',
});

const cases: ExpectedResponse[] = [
  preflight(
    'CORS preflight request from an exact matching origin should be allowed',
    '/cors-1',
    askGet('https://www.foo.com'),
    fullAllow('https://www.foo.com'),
  ),
  preflight(
    'CORS preflight request from a wildcard matching origin should be allowed',
    '/cors-1',
    askGet('https://www.bar.com'),
    fullAllow('https://www.bar.com'),
  ),
  preflight(
    "CORS preflight request from a wildcard matching any number of periods left to '*' should be allowed",
    '/cors-1',
    askGet('https://xpto.www.bar.com'),
    fullAllow('https://xpto.www.bar.com'),
  ),
  preflight(
    'CORS preflight request from a non-matching origin should not be allowed',
    '/cors-1',
    { Origin: 'https://foobar.com', 'access-control-request-method': 'GET' },
    { statusCodes: [200, 204, 403], absentHeaders: ['access-control-allow-origin'] },
  ),
  simple(
    'Simple request from an exact matching origin should be allowed',
    '/cors-1',
    'GET',
    askGet('https://www.foo.com'),
    {
      statusCode: 200,
      headers: { 'access-control-allow-origin': 'https://www.foo.com' },
    },
  ),
  simple(
    'Simple request from a wildcard matching origin should be allowed',
    '/cors-1',
    'GET',
    askGet('https://www.bar.com'),
    { statusCode: 200, headers: { 'access-control-allow-origin': 'https://www.bar.com' } },
  ),
  simple(
    'Simple request from a non-matching origin should not be allowed',
    '/cors-1',
    'GET',
    { Origin: 'https://foobar.com', 'access-control-request-method': 'GET' },
    { absentHeaders: ['access-control-allow-origin'] },
  ),
  preflight(
    'CORS preflight request with POST method should be allowed by allowMethods with wildcard',
    '/cors-2',
    { Origin: 'https://www.foo.com', 'access-control-request-method': 'POST' },
    {
      statusCodes: [200, 204],
      validHeaderValues: { 'access-control-allow-methods': ['POST', '*'] },
      headers: { 'access-control-allow-origin': 'https://www.foo.com' },
      absentHeaders: ['access-control-allow-credentials'],
    },
  ),
  preflight(
    'CORS preflight request should not receive access-control-allow-credentials header without access-control-allow-credentials set to true',
    '/cors-2',
    { Origin: 'https://www.foo.com', 'access-control-request-method': 'POST' },
    { statusCodes: [200, 204], absentHeaders: ['Access-Control-Allow-Credentials'] },
  ),
  preflight(
    "CORS preflight request from a wildcard origin should return header with '*' or with the requested Origin",
    '/cors-wildcard-origin',
    { Origin: 'https://foobar.com', 'access-control-request-method': 'PUT' },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': ['https://foobar.com', '*'],
        'access-control-allow-methods': ['PUT'],
      },
      absentHeaders: ['Access-Control-Allow-Credentials'],
    },
  ),
  preflight(
    "CORS preflight request from a wildcard origin containing a port should return header with '*' or with the requested Origin",
    '/cors-wildcard-origin',
    { Origin: 'https://foobar.com:12345', 'access-control-request-method': 'PUT' },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': ['https://foobar.com:12345', '*'],
        'access-control-allow-methods': ['PUT'],
      },
      absentHeaders: ['Access-Control-Allow-Credentials'],
    },
  ),
  simple(
    "Request from a wildcard origin containing a port should return header with '*' or with the requested Origin",
    '/cors-wildcard-origin',
    'PUT',
    { Origin: 'https://foobar.com:12345' },
    { statusCode: 200, validHeaderValues: { 'access-control-allow-origin': ['https://foobar.com:12345', '*'] } },
  ),
  simple(
    "Simple request from a wildcard origin should return header with '*' or with the requested Origin",
    '/cors-wildcard-origin',
    'PUT',
    { Origin: 'https://foobar.com' },
    {
      statusCode: 200,
      validHeaderValues: { 'access-control-allow-origin': ['https://foobar.com', '*'] },
      absentHeaders: ['Access-Control-Allow-Credentials'],
    },
  ),
  preflight(
    'CORS preflight request requesting specific method and headers should be allowed and always echo the origin with allowCredentials set to true',
    '/cors-wildcard-methods-headers',
    {
      Origin: 'https://other.foo.com',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'x-header-1, x-header-2',
    },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': ['https://other.foo.com'],
        'access-control-allow-methods': ['PUT'],
        'access-control-allow-headers': ['x-header-1, x-header-2', 'x-header-2, x-header-1'],
        'access-control-allow-credentials': ['true'],
      },
      ignoreWhitespace: true,
    },
  ),
  preflight(
    'CORS preflight request requesting specific method and headers should hide access-control-allow-credentials headers with allowCredentials set to false',
    '/cors-wildcard-methods-headers-unauth',
    {
      Origin: 'https://other.foo.com',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'x-header-1, x-header-2',
    },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': ['https://other.foo.com', '*'],
        'access-control-allow-methods': ['PUT', '*'],
        'access-control-allow-headers': ['x-header-1, x-header-2', 'x-header-2, x-header-1', '*'],
      },
      absentHeaders: ['access-control-allow-credentials'],
      ignoreWhitespace: true,
    },
  ),
  simple(
    'CORS request should receive access-control-allow-credentials header with allowCredentials set to true',
    '/cors-wildcard-methods-headers',
    'GET',
    { Origin: 'https://other.foo.com' },
    {
      statusCode: 200,
      validHeaderValues: {
        'access-control-allow-origin': ['https://other.foo.com'],
        'access-control-allow-credentials': ['true'],
      },
    },
  ),
  simple(
    'CORS request should not receive access-control-allow-credentials header without allowCredentials set to true',
    '/cors-wildcard-methods-headers-unauth',
    'GET',
    { Origin: 'https://other.foo.com' },
    {
      statusCode: 200,
      validHeaderValues: { 'access-control-allow-origin': ['https://other.foo.com', '*'] },
      absentHeaders: ['access-control-allow-credentials'],
    },
  ),
];

runConformanceTest({
  shortName: 'HTTPRouteCORS',
  description: 'An HTTPRoute with CORS filter should allow CORS requests from specified origins',
  features: ['Gateway', 'HTTPRoute', 'HTTPRouteCORS'],
  manifests: ['tests/httproute-cors.yaml'],
  test(s) {
    const gw = { namespace: ns, name: 'same-namespace' };
    const names = [
      'cors-multiple-origins-methods-headers',
      'cors-wildcard-methods',
      'cors-wildcard-origin',
      'cors-wildcard-methods-headers',
    ];
    let addr: string | undefined;
    it('Gateway and HTTPRoutes must be accepted, their references resolved', async () => {
      const routes = names.map((name) => ({ namespace: ns, name }));
      // Upstream waits for the first two to be accepted, then for all four's ResolvedRefs.
      addr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gw, routes.slice(0, 2));
      for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gw);
    });
    httpCases(s, () => addr, cases);
  },
});
