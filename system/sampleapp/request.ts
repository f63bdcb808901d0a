// Reading a request the way go-httpbin reports it: Go-canonical header names with every value kept separately, the
// client address honouring X-Forwarded-For, and the URL the client asked for.
import type { IncomingMessage } from 'node:http';

const canonicalCache = new Map<string, string>();

/**
 * Go's textproto.CanonicalMIMEHeaderKey: the first letter and every letter after a hyphen upper case, the rest lower
 * case (`x-request-ID` → `X-Request-Id`). Names with characters outside the token set stay as sent, as in Go.
 */
export function canonicalHeaderName(name: string): string {
  const hit = canonicalCache.get(name);
  if (hit !== undefined) return hit;
  let out = '';
  let upper = true;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (!isTokenChar(c)) return name;
    let ch = name[i];
    if (upper && c >= 97 && c <= 122) ch = String.fromCharCode(c - 32);
    else if (!upper && c >= 65 && c <= 90) ch = String.fromCharCode(c + 32);
    out += ch;
    upper = c === 45; // '-'
  }
  // Header names come from clients, so keep the cache bounded.
  if (canonicalCache.size > 2000) canonicalCache.clear();
  canonicalCache.set(name, out);
  return out;
}

function isTokenChar(c: number): boolean {
  // RFC 9110 tchar: ALPHA / DIGIT / "!#$%&'*+-.^_`|~"
  if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)) return true;
  return "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c));
}

/**
 * `{Name: [values]}` with keys sorted (Go marshals maps sorted). Each header line is its own array entry, so repeated
 * headers are not joined. Host is always present, as go-httpbin adds it back from the request.
 */
export function requestHeaders(req: IncomingMessage): Record<string, string[]> {
  const raw = req.rawHeaders;
  const acc: Record<string, string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = canonicalHeaderName(raw[i]);
    const list = acc[name];
    if (list) list.push(raw[i + 1]);
    else acc[name] = [raw[i + 1]];
  }
  if (!acc.Host) acc.Host = [req.headers.host ?? ''];
  return sortKeys(acc);
}

export function sortKeys<T>(obj: Record<string, T>): Record<string, T> {
  const keys = Object.keys(obj);
  keys.sort();
  const out: Record<string, T> = {};
  for (const k of keys) out[k] = obj[k];
  return out;
}

/** The client's address: the first X-Forwarded-For entry, then X-Real-Ip, then the peer address (IPv4 unmapped). */
export function clientIp(req: IncomingMessage): string {
  const xff = req.headers['x-forwarded-for'];
  if (typeof xff === 'string' && xff !== '') {
    const comma = xff.indexOf(',');
    return (comma < 0 ? xff : xff.slice(0, comma)).trim();
  }
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && real !== '') return real.trim();
  const addr = req.socket.remoteAddress ?? '';
  return addr.startsWith('::ffff:') ? addr.slice(7) : addr;
}

/** `scheme://host/uri` as the client asked for it; the scheme honours X-Forwarded-Proto as go-httpbin does. */
export function requestUrl(req: IncomingMessage): string {
  const proto = req.headers['x-forwarded-proto'] ?? req.headers['x-forwarded-protocol'];
  const tlsConn = (req.socket as { encrypted?: boolean }).encrypted === true;
  let scheme = typeof proto === 'string' && proto !== '' ? proto : tlsConn ? 'https' : 'http';
  if (req.headers['x-forwarded-ssl'] === 'on') scheme = 'https';
  return `${scheme}://${req.headers.host ?? ''}${req.url ?? '/'}`;
}

/** Query arguments as `{name: [values]}`, keys sorted. */
export function queryArgs(rawQuery: string): Record<string, string[]> {
  const acc: Record<string, string[]> = {};
  if (rawQuery === '') return acc;
  for (const [k, v] of new URLSearchParams(rawQuery)) {
    const list = acc[k];
    if (list) list.push(v);
    else acc[k] = [v];
  }
  return sortKeys(acc);
}
