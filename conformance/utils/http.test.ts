// CompareRoundTrip and the request as upstream's conformance/utils/http (Gateway API v1.6.1 http.go) make and judge
// them: the default 200, the echo body's path/method/namespace/pod checks, expected and absent headers, redirects
// (port left out for the scheme's default), 408/504 accepted when a timeout is expected, and the X-Echo-Set-Header.
import { describe, expect, it } from 'vitest';
import { compareRoundTrip, makeRequest, testCaseName } from './http.ts';
import type { CapturedRequest, CapturedResponse } from './roundtrip.ts';

const cReq = (o: Partial<CapturedRequest> = {}): CapturedRequest => ({
  path: '/',
  host: 'example.com',
  method: 'GET',
  proto: 'HTTP/1.1',
  headers: { 'X-Header-Set': ['set'] },
  namespace: 'gateway-conformance-infra',
  pod: 'infra-backend-v1-abc',
  ...o,
});
const cRes = (statusCode: number, o: Partial<CapturedResponse> = {}): CapturedResponse => ({
  statusCode,
  protocol: 'HTTP/1.1',
  headers: {},
  ...o,
});

describe('conformance http expectations', () => {
  const req = makeRequest({ request: { path: '/a?b=1', host: 'example.com' } }, '127.0.0.1:80', 10_000);

  it('makes the request as upstream: port 80 left out, query kept, an X-Echo-Set-Header always sent', () => {
    expect(req.url.href).toBe('http://127.0.0.1/a?b=1');
    expect(req.headers?.['X-Echo-Set-Header']).toBe('');
    expect(testCaseName({ request: { host: 'h', path: '/p' }, backend: 'v1' }, 3)).toBe(
      "3 request to 'h/p' should go to v1",
    );
  });

  it('checks status, backend pod, namespace, headers', () => {
    const e = { request: { path: '/' }, backend: 'infra-backend-v1', namespace: 'gateway-conformance-infra' };
    expect(compareRoundTrip(req, cReq(), cRes(200), e)).toBeUndefined();
    expect(compareRoundTrip(req, cReq(), cRes(404), e)).toMatch(/expected status code to be one of \[200\], got 404/);
    expect(compareRoundTrip(req, cReq({ pod: 'infra-backend-v2-x' }), cRes(200), e)).toMatch(/pod name to start/);
    expect(compareRoundTrip(req, cReq(), cRes(200), { ...e, namespace: 'other' })).toMatch(/expected namespace/);
    expect(
      compareRoundTrip(req, cReq(), cRes(200), {
        ...e,
        expectedRequest: { path: '/', headers: { 'x-header-set': 'set' } },
      }),
    ).toBeUndefined();
    expect(
      compareRoundTrip(req, cReq(), cRes(200), {
        ...e,
        expectedRequest: { path: '/', absentHeaders: ['X-Header-Set'] },
      }),
    ).toMatch(/X-Header-Set header to not be set/);
  });

  it('checks redirects and accepts a timeout where one is expected', () => {
    const e = {
      request: { path: '/', unfollowRedirect: true },
      response: { statusCode: 302 },
      redirectRequest: { host: 'example.org' },
    };
    const redirect = (port: string) =>
      cRes(302, { redirectRequest: { scheme: 'http', host: 'example.org', port, path: '/a' } });
    expect(compareRoundTrip(req, cReq(), redirect(''), e)).toBeUndefined();
    expect(compareRoundTrip(req, cReq(), redirect('80'), e)).toBeUndefined();
    expect(compareRoundTrip(req, cReq(), redirect('8080'), e)).toMatch(/port to be 80 or not set/);
    expect(compareRoundTrip(req, cReq(), cRes(504), { request: {}, response: { statusCode: 408 } })).toBeUndefined();
  });
});
