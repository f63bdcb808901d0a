// One HTTP round trip as upstream's roundtripper.DefaultRoundTripper makes it (Gateway API v1.6.1
// conformance/utils/roundtripper/roundtripper.go): the request with its Host, headers (one value each) and body, the
// RequestTimeout as a deadline, redirects followed unless asked not to; the echo backend's JSON body read into a
// CapturedRequest when the response's Content-Type is exactly application/json, and a redirect's Location split into
// scheme, host, port and path.
import { Agent, request } from 'undici';
import { H2, H2C_PRIOR_KNOWLEDGE, http2RoundTrip } from './roundtrip-h2.ts';
import { checkServerIdentity } from './server-identity.ts';

export { checkServerIdentity };

export interface RoundTripRequest {
  url: URL;
  host?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  unfollowRedirect?: boolean;
  timeoutMs: number;
  /**
   * HTTPS: the server certificate (PEM) to trust and the SNI to send (upstream's tls.MakeTLSRequest...), and the
   * client certificate and key (PEM) to present when the server asks for one (upstream's GetClientCertificateHook).
   */
  tls?: TlsOptions;
  /** Upstream's Request.Protocol: H2C_PRIOR_KNOWLEDGE or H2 (roundtrip-h2.ts); else HTTP/1.1. */
  protocol?: string;
}

/** The echo backend's body (system/echo/response.ts), as the suite reads it. */
export interface CapturedRequest {
  path: string;
  host: string;
  method: string;
  proto: string;
  headers?: Record<string, string[]>;
  httpPort?: string;
  namespace: string;
  pod: string;
  tls?: { serverName?: string; peerCertificates?: string[] };
}

export interface RedirectRequest {
  scheme: string;
  host: string;
  port: string;
  path: string;
}

export interface CapturedResponse {
  statusCode: number;
  protocol: string;
  /** Lower-case names, every value. */
  headers: Record<string, string[]>;
  redirectRequest?: RedirectRequest;
}

// Connections are pooled per origin as Go's default transport does.
const agent = new Agent({ connect: { timeout: 10_000 } });

export interface TlsOptions {
  ca: string;
  servername: string;
  clientCert?: { cert: string; key: string };
}

const tlsAgents = new Map<string, Agent>();
function tlsAgent(t: TlsOptions): Agent {
  const key = `${t.servername}\n${t.ca}\n${t.clientCert?.cert ?? ''}`;
  let a = tlsAgents.get(key);
  if (!a) {
    // Go's x509 pool: every certificate in it is a trust anchor, a CA-signed leaf too (OpenSSL's partial chain).
    a = new Agent({
      connect: {
        timeout: 10_000,
        ca: t.ca,
        servername: t.servername,
        checkServerIdentity,
        allowPartialTrustChain: true,
        ...(t.clientCert ? { cert: t.clientCert.cert, key: t.clientCert.key } : {}),
      },
    });
    tlsAgents.set(key, a);
  }
  return a;
}

const REDIRECTS = new Set([300, 301, 302, 303, 304, 305, 307, 308]);
export const isRedirect = (code: number): boolean => REDIRECTS.has(code);
/** 408 and 504 (upstream's IsTimeoutError). */
export const isTimeoutError = (code: number): boolean => code === 408 || code === 504;

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v : [v];
  return out;
}

/** Splits a Location (relative to `base`) as Go's url.URL: Hostname(), Port(), Path. */
export function redirectOf(location: string, base: URL): RedirectRequest {
  const u = new URL(location, base);
  // WHATWG URL drops a scheme's default port (":80" on http); Go's Port() keeps what was written.
  const written = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*?:(\d+)(?:[/?#]|$)/i.exec(location)?.[1];
  return {
    scheme: u.protocol.replace(/:$/, ''),
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: written ?? u.port,
    path: decodeURIComponent(u.pathname),
  };
}

export async function captureRoundTrip(
  req: RoundTripRequest,
  hops = 0,
): Promise<{ cReq: CapturedRequest; cRes: CapturedResponse }> {
  const method = req.method || 'GET';
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.host) headers.host = req.host;
  const h2 = req.protocol === H2C_PRIOR_KNOWLEDGE || req.protocol === H2;
  const res = h2
    ? await http2RoundTrip({ ...req, method, headers, tls: req.protocol === H2 ? req.tls : undefined })
    : await request(req.url, {
        method: method as any,
        headers,
        body: req.body || undefined,
        dispatcher: req.tls ? tlsAgent(req.tls) : agent,
        signal: AbortSignal.timeout(req.timeoutMs),
      });
  const text = 'text' in res ? res.text : await res.body.text();
  const rh = flatHeaders(res.headers);
  if (isRedirect(res.statusCode) && !req.unfollowRedirect && rh.location && hops < 10) {
    // Go's client follows with GET (303, and 301/302 of a non-GET/HEAD) and the new URL's own Host.
    const next = new URL(rh.location[0], req.url);
    const keep = res.statusCode === 307 || res.statusCode === 308;
    return captureRoundTrip(
      { ...req, url: next, host: undefined, method: keep ? method : 'GET', body: keep ? req.body : undefined },
      hops + 1,
    );
  }
  let cReq: CapturedRequest = { path: '', host: '', method, proto: '', namespace: '', pod: '' };
  if ((rh['content-type']?.[0] ?? '') === 'application/json') {
    try {
      cReq = JSON.parse(text) as CapturedRequest;
    } catch (err) {
      throw new Error(`unexpected error reading response: ${(err as Error).message}`);
    }
  }
  const cRes: CapturedResponse = { statusCode: res.statusCode, protocol: h2 ? 'HTTP/2.0' : 'HTTP/1.1', headers: rh };
  if (isRedirect(res.statusCode)) {
    if (!rh.location) throw new Error('http: no Location header in response');
    cRes.redirectRequest = redirectOf(rh.location[0], req.url);
  }
  return { cReq, cRes };
}
