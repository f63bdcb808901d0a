// Kubernetes' URL CEL library (k8s.io/apiserver/pkg/cel/library/urls.go, Kubernetes 1.32): `url(s)`, `isURL(s)`,
// `getScheme()`, `getHost()`, `getHostname()`, `getPort()`, `getEscapedPath()`, `getQuery()`. Like Go's
// url.ParseRequestURI, a URL is absolute (with a scheme) or an absolute path; WHATWG URL parsing (node:url) does
// the rest, so hosts are lower-cased and IPv6 hosts keep their brackets in getHost() as in Go.
import type { CelFunc, CelValue } from '@bufbuild/cel';
import { celList, celMap } from '@bufbuild/cel';
import { fail, fn, method, OpaqueValue } from './func.ts';

export class URLValue extends OpaqueValue {
  readonly celTypeName = 'kubernetes.URL';
  readonly raw: string;
  readonly url: URL | undefined;
  readonly path: string;
  constructor(raw: string, url: URL | undefined, path: string) {
    super();
    this.raw = raw;
    this.url = url;
    this.path = path;
  }
  equals(o: OpaqueValue): boolean {
    return o instanceof URLValue && o.raw === this.raw;
  }
}

export function toURL(s: string): URLValue {
  if (s.startsWith('/')) {
    const q = s.indexOf('?');
    return new URLValue(s, undefined, q < 0 ? s : s.slice(0, q));
  }
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s))
    fail(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
  try {
    const u = new URL(s);
    return new URLValue(s, u, u.pathname);
  } catch {
    return fail(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
  }
}

const u = (t: CelValue) => (t instanceof URLValue ? t : undefined);
function urlMethod(name: string, f: (v: URLValue) => CelValue): CelFunc {
  return method(name, 0, (t) => (u(t) ? f(u(t) as URLValue) : undefined));
}

export const urlLibrary: CelFunc[] = [
  fn('url', 1, ([s]) => (typeof s === 'string' ? (toURL(s) as unknown as CelValue) : undefined)),
  fn('isURL', 1, ([s]) => {
    if (typeof s !== 'string') return undefined;
    try {
      toURL(s);
      return true;
    } catch {
      return false;
    }
  }),
  urlMethod('getScheme', (v) => (v.url ? v.url.protocol.replace(/:$/, '') : '')),
  urlMethod('getHost', (v) => v.url?.host ?? ''),
  urlMethod('getHostname', (v) => (v.url?.hostname ?? '').replace(/^\[(.*)\]$/, '$1')),
  urlMethod('getPort', (v) => v.url?.port ?? ''),
  urlMethod('getEscapedPath', (v) => v.path),
  urlMethod('getQuery', (v) => {
    const q = new URLSearchParams(v.url ? v.url.search : v.raw.includes('?') ? v.raw.slice(v.raw.indexOf('?')) : '');
    const m = new Map<string, CelValue>();
    for (const k of new Set(q.keys())) m.set(k, celList(q.getAll(k)) as unknown as CelValue);
    return celMap(m) as unknown as CelValue;
  }),
];
