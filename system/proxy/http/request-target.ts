// The HTTP/1.1 request-target (RFC 9112 §3.2) turned into :path, :authority and :scheme the way Envoy's HTTP/1 codec
// does it (ServerConnectionImpl::handlePath in source/common/http/http1/codec_impl.cc, Utility::Url::initialize in
// source/common/http/utility.cc):
// - origin-form (`/a?b`), and `*` for OPTIONS (asterisk-form): :path as received. The connection manager answers
//   404 for a :path that does not start with '/'.
// - absolute-form (`http://host:port/a?b`, what a client sends to a proxy), with the HCM's
//   http_protocol_options.allow_absolute_url (true unless set false): :authority becomes the URI's host[:port] as
//   written, replacing any Host header (RFC 9112 §3.2.2: the server MUST ignore Host then), :path the rest of the URI
//   ('/' when there is none) and :scheme the URI's scheme, lower-cased. Only http and https are valid schemes (400
//   http1.invalid_scheme); an https URI on a plaintext connection is refused with 403
//   (http1.https_url_on_plaintext_connection) where Envoy validates the scheme, an edge HCM (use_remote_address with
//   xff_num_trusted_hops 0). A URI that does not parse is 400 http1.invalid_url. With allow_absolute_url false the
//   target is the :path as received (and so a 404).
// - authority-form, CONNECT's only form (`host:port`): :authority, and no :path.
import { isIPv6 } from 'node:net';

export interface TargetOptions {
  allowAbsoluteUrl: boolean;
  /** Refuse https URIs on plaintext connections (Envoy's validate_scheme). */
  validateScheme: boolean;
  /** The downstream connection is TLS (never, for this proxy's HTTP/1.1 listeners). */
  tls: boolean;
}

export type RequestTarget =
  | {
      ok: true;
      /** :path; undefined for CONNECT. */
      path: string | undefined;
      /** :authority from the target; undefined when the Host header stays. */
      authority?: string;
      /** :scheme from an absolute URI. */
      scheme?: string;
    }
  | { ok: false; status: 400 | 403; details: string };

// http_parser's URL grammar for the authority: optional userinfo, a bracketed IPv6 literal or a name, an optional port.
const AUTHORITY = /^(?:[^@/?#]*@)?(\[[^\]/?#]*\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::(\d{1,5}))?$/;

export function parseRequestTarget(method: string, target: string, o: TargetOptions): RequestTarget {
  const connect = method === 'CONNECT';
  if (!connect && (target.startsWith('/') || (method === 'OPTIONS' && target.startsWith('*')))) {
    return { ok: true, path: target };
  }
  if (!connect && !o.allowAbsoluteUrl) return { ok: true, path: target };
  if (connect) {
    const a = authority(target, true);
    return a === undefined ? invalid('http1.invalid_url') : { ok: true, path: undefined, authority: a };
  }
  const m = /^([A-Za-z]+):\/\/([^/?#]*)(.*)$/s.exec(target);
  const host = m ? authority(m[2]!, false) : undefined;
  if (!m || host === undefined) return invalid('http1.invalid_url');
  const scheme = m[1]!.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return invalid('http1.invalid_scheme');
  if (o.validateScheme && scheme === 'https' && !o.tls) {
    return { ok: false, status: 403, details: 'http1.https_url_on_plaintext_connection' };
  }
  return { ok: true, path: m[3] || '/', authority: host, scheme };
}

/** host[:port] of an authority (userinfo dropped), or undefined when it is not one; CONNECT needs the port. */
function authority(text: string, portRequired: boolean): string | undefined {
  const a = AUTHORITY.exec(text);
  if (!a) return undefined;
  const [, host, port] = a;
  if (port !== undefined && Number(port) > 65535) return undefined;
  if (portRequired && port === undefined) return undefined;
  if (host!.startsWith('[') && !isIPv6(host!.slice(1, -1))) return undefined;
  return port === undefined ? host : `${host}:${port}`;
}

function invalid(details: string): RequestTarget {
  return { ok: false, status: 400, details };
}
