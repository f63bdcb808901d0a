// Requests and their expectations as upstream's conformance/utils/http (Gateway API v1.6.1 http.go): ExpectedResponse
// (request host/path/method/headers, expected request as the backend saw it, absent headers, redirects, the backend
// pod prefix and namespace), MakeRequestAndExpectEventuallyConsistentResponse with AwaitConvergence's rule (the
// expectation must hold RequiredConsecutiveSuccesses times in a row within MaxTimeToConsistency; after a miss, 1 s
// before the next try), and CompareRoundTrip's checks in upstream's order and with its messages.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TimeoutConfig } from './config.ts';
import {
  type CapturedRequest,
  type CapturedResponse,
  captureRoundTrip,
  isRedirect,
  isTimeoutError,
  type RedirectRequest,
  type RoundTripRequest,
} from './roundtrip.ts';

export interface Request {
  host?: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  unfollowRedirect?: boolean;
  body?: string;
  /** The SNI (a TLS request sends it; as an expectation, the SNI the backend must have seen). */
  sni?: string;
  /** As an expectation: a PEM certificate the backend must have been presented (the Gateway's client certificate). */
  clientCert?: string;
  /** roundtrip-h2.ts H2C_PRIOR_KNOWLEDGE or H2 (upstream's roundtripper protocols); HTTP/1.1 when absent. */
  protocol?: string;
}

export interface ExpectedRequest extends Request {
  absentHeaders?: string[];
  httpPort?: string;
}

export interface Response {
  statusCode?: number;
  statusCodes?: number[];
  headers?: Record<string, string>;
  validHeaderValues?: Record<string, string[]>;
  absentHeaders?: string[];
  ignoreWhitespace?: boolean;
}

export interface ExpectedResponse {
  request: Request;
  expectedRequest?: ExpectedRequest;
  redirectRequest?: Partial<RedirectRequest>;
  backendSetResponseHeaders?: Record<string, string>;
  response?: Response;
  /** Prefix of the pod name that must have answered. */
  backend?: string;
  namespace?: string;
  testCaseName?: string;
}

/** Upstream's GetTestCaseName: the subtest's name. */
export function testCaseName(e: ExpectedResponse, i: number): string {
  if (e.testCaseName) return e.testCaseName;
  const req = `${i} request to '${e.request.host ?? ''}${e.request.path ?? ''}'${e.request.headers ? ' with headers' : ''}`;
  if (e.backend) return `${req} should go to ${e.backend}`;
  return `${req} should receive one of [${statusCodesOf(e).join(' ')}]`;
}

function statusCodesOf(e: ExpectedResponse): number[] {
  const codes = [...(e.response?.statusCodes ?? [])];
  const one = e.response?.statusCode;
  if (one && !codes.includes(one)) codes.push(one);
  return codes.length ? codes : [200];
}

/** Upstream's CalculateHost: the port is left out when it is the scheme's default. */
function calculateHost(gwAddr: string, scheme: string): string {
  const m = /^(.*):(\d+)$/.exec(gwAddr);
  if (!m) return gwAddr;
  if ((scheme === 'http' && m[2] === '80') || (scheme === 'https' && m[2] === '443')) return m[1];
  return gwAddr;
}

/** Upstream's MakeRequest: the round trip of an expectation against the gateway address `host:port`. */
export function makeRequest(e: ExpectedResponse, gwAddr: string, timeoutMs: number, scheme = 'http'): RoundTripRequest {
  const [path, query] = (e.request.path ?? '').split(/\?(.*)/s, 2);
  const url = new URL(`${scheme}://${calculateHost(gwAddr, scheme)}`);
  url.pathname = path || '/';
  if (query !== undefined) url.search = query;
  const headers: Record<string, string> = { ...(e.request.headers ?? {}) };
  headers['X-Echo-Set-Header'] = Object.entries(e.backendSetResponseHeaders ?? {})
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
  return {
    url,
    host: e.request.host,
    method: e.request.method || 'GET',
    headers,
    body: e.request.body,
    unfollowRedirect: e.request.unfollowRedirect,
    ...(e.request.protocol ? { protocol: e.request.protocol } : {}),
    timeoutMs,
  };
}

const lower = (h: Record<string, string[]> | undefined) =>
  Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), v]));

function compareRequest(cReq: CapturedRequest, e: ExpectedResponse): string | undefined {
  const exp: ExpectedRequest = e.expectedRequest ?? { ...e.request };
  const method = exp.method || 'GET';
  if (exp.host && exp.host !== cReq.host) return `expected host to be ${exp.host}, got ${cReq.host}`;
  if ((exp.path ?? '') !== cReq.path) return `expected path to be ${exp.path ?? ''}, got ${cReq.path}`;
  if (method !== cReq.method) return `expected method to be ${method}, got ${cReq.method}`;
  if ((e.namespace ?? '') !== cReq.namespace) return `expected namespace to be ${e.namespace}, got ${cReq.namespace}`;
  if (exp.sni && exp.sni !== (cReq.tls?.serverName ?? ''))
    return `expected SNI "${cReq.tls?.serverName ?? ''}" to be equal to "${exp.sni}"`;
  // PEM line endings aside (the suite's generator writes CRLF, the echo LF), as upstream's slices.Contains.
  const lf = (p: string) => p.replace(/\r\n/g, '\n').trim();
  if (exp.clientCert && !(cReq.tls?.peerCertificates ?? []).some((c) => lf(c) === lf(exp.clientCert!)))
    return `expected client certificate ${JSON.stringify(exp.clientCert)} to be presented, got ${JSON.stringify(cReq.tls?.peerCertificates ?? [])}`;
  const got = lower(cReq.headers);
  if (exp.headers) {
    if (!cReq.headers) return `no headers captured, expected ${Object.keys(exp.headers).length}`;
    for (const [name, val] of Object.entries(exp.headers)) {
      const actual = got[name.toLowerCase()];
      if (!actual) return `expected ${name} header to be set, actual headers: ${JSON.stringify(cReq.headers)}`;
      if (actual.join(',') !== val) return `expected ${name} header to be set to ${val}, got ${actual.join(',')}`;
    }
  }
  if (exp.httpPort && exp.httpPort !== cReq.httpPort)
    return `expected httpPort "${exp.httpPort}", got "${cReq.httpPort}"`;
  for (const name of exp.absentHeaders ?? []) {
    const v = got[name.toLowerCase()];
    if (v) return `expected ${name} header to not be set, got ${v}`;
  }
  if (!(cReq.pod ?? '').startsWith(e.backend ?? ''))
    return `expected pod name to start with ${e.backend}, got ${cReq.pod}`;
  return undefined;
}

function compareResponseHeaders(cRes: CapturedResponse, r: Response): string | undefined {
  const ws = (v: string) => (r.ignoreWhitespace ? v.replaceAll(' ', '') : v);
  for (const [name, vals] of Object.entries(r.validHeaderValues ?? {})) {
    const actual = cRes.headers[name.toLowerCase()];
    if (!actual) return `expected ${name} header to be set, actual headers: ${JSON.stringify(cRes.headers)}`;
    if (!vals.map(ws).includes(ws(actual.join(','))))
      return `expected ${name} header to be set to one of ${vals}, got ${actual.join(',')}`;
  }
  for (const [name, val] of Object.entries(r.headers ?? {})) {
    const actual = cRes.headers[name.toLowerCase()];
    if (!actual) return `expected ${name} header to be set, actual headers: ${JSON.stringify(cRes.headers)}`;
    if (ws(actual.join(',')) !== ws(val)) return `expected ${name} header to be set to ${val}, got ${actual.join(',')}`;
  }
  for (const name of r.absentHeaders ?? []) {
    const v = cRes.headers[name.toLowerCase()];
    if (v) return `expected ${name} header to not be set, got ${v}`;
  }
  return undefined;
}

function compareRedirect(req: RoundTripRequest, cRes: CapturedResponse, e: ExpectedResponse): string | undefined {
  if (!e.redirectRequest) return undefined;
  const got = cRes.redirectRequest!;
  const want = {
    host: e.redirectRequest.host || got.host,
    scheme: e.redirectRequest.scheme || req.url.protocol.replace(/:$/, ''),
    path: e.redirectRequest.path || req.url.pathname,
    port: e.redirectRequest.port ?? '',
  };
  if (want.host !== got.host) return `expected redirected hostname to be "${want.host}", got "${got.host}"`;
  if (want.port === '') {
    const scheme = got.scheme.toLowerCase();
    if (scheme === 'http' && got.port !== '80' && got.port !== '')
      return `for http scheme, expected redirected port to be 80 or not set, got "${got.port}"`;
    if (scheme === 'https' && got.port !== '443' && got.port !== '')
      return `for https scheme, expected redirected port to be 443 or not set, got "${got.port}"`;
  } else if (want.port !== got.port) return `expected redirected port to be "${want.port}", got "${got.port}"`;
  if (want.scheme !== got.scheme) return `expected redirected scheme to be "${want.scheme}", got "${got.scheme}"`;
  if (want.path !== got.path) return `expected redirected path to be "${want.path}", got "${got.path}"`;
  return undefined;
}

/** Upstream's CompareRoundTrip: undefined when the round trip meets the expectation, else why not. */
export function compareRoundTrip(
  req: RoundTripRequest,
  cReq: CapturedRequest,
  cRes: CapturedResponse,
  e: ExpectedResponse,
): string | undefined {
  const codes = statusCodesOf(e);
  if (isTimeoutError(cRes.statusCode) && codes.some(isTimeoutError)) return undefined;
  if (!codes.includes(cRes.statusCode))
    return `expected status code to be one of [${codes.join(' ')}], got ${cRes.statusCode}`;
  if (cRes.statusCode === 200 || cRes.statusCode === 204) {
    const miss = compareRequest(cReq, e);
    if (miss) return miss;
    return compareResponseHeaders(cRes, e.response ?? {});
  }
  if (isRedirect(cRes.statusCode)) return compareRedirect(req, cRes, e);
  return undefined;
}

/** Upstream's AwaitConvergence: `fn` must hold `threshold` times in a row; 1 s after each miss. */
export async function awaitConvergence(
  threshold: number,
  maxTimeMs: number,
  fn: (elapsedMs: number) => Promise<string | undefined>,
): Promise<void> {
  const start = performance.now();
  let successes = 0;
  let attempts = 0;
  let last: string | undefined;
  for (;;) {
    if (performance.now() - start >= maxTimeMs)
      throw new Error(`timeout while waiting after ${attempts} attempts; last: ${last}`);
    last = await fn(performance.now() - start);
    attempts++;
    if (last === undefined) {
      if (++successes >= threshold) return;
      continue;
    }
    successes = 0;
    const left = maxTimeMs - (performance.now() - start);
    if (left <= 0)
      throw new Error(`timeout while waiting after ${attempts} attempts, 0/${threshold} successes; last: ${last}`);
    await sleep(Math.min(1000, left));
  }
}

/** Upstream's MakeRequestAndExpectEventuallyConsistentResponse. */
export async function makeRequestAndExpectEventuallyConsistentResponse(
  tc: TimeoutConfig,
  gwAddr: string,
  e: ExpectedResponse,
): Promise<void> {
  await expectEventuallyConsistent(tc, makeRequest(e, gwAddr, tc.requestTimeout), e);
}

/** The request, until its round trip matches `e` requiredConsecutiveSuccesses times in a row. */
async function expectEventuallyConsistent(
  tc: TimeoutConfig,
  req: RoundTripRequest,
  e: ExpectedResponse,
): Promise<void> {
  await awaitConvergence(tc.requiredConsecutiveSuccesses, tc.maxTimeToConsistency, async () => {
    try {
      const { cReq, cRes } = await captureRoundTrip(req);
      return compareRoundTrip(req, cReq, cRes, e);
    } catch (err) {
      return `request failed: ${(err as Error).message}`;
    }
  });
}

/** makeRequest over HTTPS, trusting `ca`, sending `sni` and presenting `client` when given. */
function makeTLSRequest(
  e: ExpectedResponse,
  gwAddr: string,
  tc: TimeoutConfig,
  tls: TLSClientOptions,
): RoundTripRequest {
  const { ca, sni, client } = tls;
  return {
    ...makeRequest(e, gwAddr, tc.requestTimeout, 'https'),
    tls: { ca, servername: sni, ...(client ? { clientCert: client } : {}) },
  };
}

interface TLSClientOptions {
  ca: string;
  sni: string;
  client?: { cert: string; key: string };
}

/**
 * Upstream's tls.MakeTLSRequestAndExpectEventuallyConsistentResponse: the same over HTTPS, trusting `serverCert`
 * (PEM) and sending `sni`; with `client`, that certificate presented when the server asks for one. (Upstream also
 * asserts that its GetClientCertificateHook was called; Node's TLS client has no such hook: a server that did not ask
 * shows in the tests' failure cases instead.)
 */
export async function makeTLSRequestAndExpectEventuallyConsistentResponse(...args: UpstreamTLSArgs): Promise<void> {
  const [tc, , , , e] = args;
  await expectEventuallyConsistent(tc, upstreamTLSRequest(...args), e);
}

/**
 * The arguments of upstream's tls.MakeTLSRequestAndExpect* helpers (less its `t` and the client certificate's
 * separate cert and key): timeouts, the gateway's address, the server certificate to trust, the SNI, what to expect
 * and the client certificate to present.
 */
type UpstreamTLSArgs = [
  tc: TimeoutConfig,
  gwAddr: string,
  serverCert: string,
  sni: string,
  e: ExpectedResponse,
  client?: { cert: string; key: string },
];

function upstreamTLSRequest(...[tc, gwAddr, serverCert, sni, e, client]: UpstreamTLSArgs): RoundTripRequest {
  return makeTLSRequest(e, gwAddr, tc, { ca: serverCert, sni, client });
}

/** Upstream's MakeRequestAndExpectFailure: 5 responses in a row that are neither 200 nor a timeout. */
export async function makeRequestAndExpectFailure(
  tc: TimeoutConfig,
  gwAddr: string,
  e: ExpectedResponse,
): Promise<void> {
  const req = makeRequest(e, gwAddr, tc.requestTimeout);
  await awaitConvergence(5, tc.maxTimeToConsistency, async () => {
    let code: number;
    try {
      code = (await captureRoundTrip(req)).cRes.statusCode;
    } catch (err) {
      return `request failed: ${(err as Error).message}`;
    }
    if (isTimeoutError(code)) return `status ${code}`;
    if (code === 200)
      throw new Error(`request ${req.url} (Host ${req.host}) should fail, returned HTTP Status OK (200) instead`);
    return undefined;
  });
}

/**
 * Upstream's tls.MakeTLSRequestAndExpectFailureResponse: one request over HTTPS (trusting `serverCert`, sending `sni`,
 * presenting `client` if given) that must fail: an error, not a response (a refused client certificate).
 */
export async function makeTLSRequestAndExpectFailureResponse(...args: UpstreamTLSArgs): Promise<void> {
  const req = upstreamTLSRequest(...args);
  let status: number | undefined;
  try {
    status = (await captureRoundTrip(req)).cRes.statusCode;
  } catch {
    return;
  }
  throw new Error(`Request should fail (got status ${status})`);
}
