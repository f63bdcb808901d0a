// HTTP/2 round trips for the suite, as upstream's roundtripper makes them (Gateway API v1.6.1
// conformance/utils/roundtripper/roundtripper.go): H2C_PRIOR_KNOWLEDGE (http2.Transport with AllowHTTP, a plain TCP
// dial: h2c with prior knowledge, no upgrade) and H2 (http2.Transport over TLS, ALPN h2). One session per round trip
// (node:http2), closed after the response.
import http2 from 'node:http2';
import type { PeerCertificate } from 'node:tls';
import { checkServerIdentity } from './server-identity.ts';

export const H2C_PRIOR_KNOWLEDGE = 'H2C_PRIOR_KNOWLEDGE';
export const H2 = 'H2';

export interface H2Response {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One HTTP/2 request: `:authority` from `host` (or the URL), the body, a deadline of `timeoutMs`. */
export function http2RoundTrip(r: {
  url: URL;
  host?: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  tls?: { ca: string; servername: string; clientCert?: { cert: string; key: string } };
}): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const origin = `${r.tls ? 'https' : 'http'}://${r.url.host}`;
    const session = http2.connect(
      origin,
      r.tls
        ? {
            ca: r.tls.ca,
            servername: r.tls.servername,
            // As the HTTP/1.1 round trips (roundtrip.ts): Go's name check, the trusted certificate an anchor.
            checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(r.tls!.servername, cert),
            allowPartialTrustChain: true,
            ...(r.tls.clientCert ?? {}),
          }
        : {},
    );
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`context deadline exceeded (${r.timeoutMs} ms)`));
    }, r.timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      session.destroy();
      reject(err);
    };
    session.on('error', fail);
    const headers: http2.OutgoingHttpHeaders = {
      ':method': r.method,
      ':path': r.url.pathname + r.url.search,
      ':authority': r.host ?? r.url.host,
    };
    for (const [k, v] of Object.entries(r.headers)) if (k.toLowerCase() !== 'host') headers[k.toLowerCase()] = v;
    const req = session.request(headers, { endStream: !r.body });
    let statusCode = 0;
    let got: H2Response['headers'] = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => {
      statusCode = Number(h[':status']);
      got = Object.fromEntries(Object.entries(h).filter(([k]) => !k.startsWith(':'))) as H2Response['headers'];
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', fail);
    req.on('end', () => {
      clearTimeout(timer);
      session.close();
      resolve({ statusCode, headers: got, text: Buffer.concat(chunks).toString() });
    });
    if (r.body) req.end(r.body);
  });
}
