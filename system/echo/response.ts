// What upstream's conformance echo server (Gateway API v1.6.1 conformance/echo-basic/echo-basic.go) answers, as pure
// functions over a request: the JSON body the conformance suite reads (`path, host, method, proto, headers, httpPort,
// namespace, ingress, service, pod`, and `tls` over TLS), its header names in Go's canonical form (net/textproto
// CanonicalMIMEHeaderKey: Go's http.Request.Header, without Host), the `X-Echo-Set-Header` response headers, the
// `/status/<code>` answer and the `delay` query parameter as Go's time.ParseDuration reads it.

/** The pod's identity, from the environment upstream's manifests set (downward API). */
export interface EchoContext {
  namespace: string;
  ingress: string;
  service: string;
  pod: string;
}

export function contextFromEnv(env: NodeJS.ProcessEnv = process.env): EchoContext {
  return {
    namespace: env.NAMESPACE ?? '',
    ingress: env.INGRESS_NAME ?? '',
    service: env.SERVICE_NAME ?? '',
    pod: env.POD_NAME ?? '',
  };
}

export interface TlsAssertions {
  version: string;
  peerCertificates?: string[];
  serverName: string;
  negotiatedProtocol?: string;
  cipherSuite: string;
}

/** The request as the echo handler sees it (HTTP/1.1 or HTTP/2 alike). */
export interface EchoRequest {
  /** The request target as sent (Go's RequestURI). */
  uri: string;
  /** Host header or :authority. */
  host: string;
  method: string;
  /** `HTTP/1.1`, `HTTP/2.0`. */
  proto: string;
  /** Header name (any case) → values, without Host and HTTP/2 pseudo-headers. */
  headers: Record<string, string[]>;
  tls?: TlsAssertions;
}

/** Go's textproto.CanonicalMIMEHeaderKey: `x-foo-bar` → `X-Foo-Bar`; names with other than token chars unchanged. */
export function canonicalHeaderKey(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, sep: string, c: string) => sep + c.toUpperCase());
}

/** The JSON the echo server answers with (field order as upstream's RequestAssertions). */
export function echoBody(req: EchoRequest, ctx: EchoContext, httpPort: string): Record<string, unknown> {
  const headers: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(req.headers)) {
    if (name.startsWith(':') || name.toLowerCase() === 'host') continue;
    const key = canonicalHeaderKey(name);
    headers[key] = [...(headers[key] ?? []), ...values];
  }
  return {
    path: req.uri,
    host: req.host,
    method: req.method,
    proto: req.proto,
    headers,
    httpPort,
    namespace: ctx.namespace,
    ingress: ctx.ingress,
    service: ctx.service,
    pod: ctx.pod,
    ...(req.tls ? { tls: req.tls } : {}),
  };
}

/**
 * The response headers asked for by `X-Echo-Set-Header: name:value,name2:value2` (every such header; a name given
 * twice gets its values joined with ","), as upstream's writeEchoResponseHeaders.
 */
export function echoSetHeaders(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const list of values ?? []) {
    for (const kv of list.split(',')) {
      const t = kv.trim();
      const i = t.indexOf(':');
      const name = i < 0 ? t : t.slice(0, i);
      const value = i < 0 ? '' : t.slice(i + 1);
      if (name === '') continue;
      out[name] = name in out ? `${out[name]},${value.trim()}` : value;
    }
  }
  return out;
}

/** `/status/<3 digits>` answers that code; any other `/status/...` answers 400 (upstream's statusHandler). */
export function statusCodeOf(uri: string): number {
  const m = /^\/status\/(\d\d\d)$/.exec(uri);
  return m ? Number(m[1]) : 400;
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

/** Go's time.ParseDuration (e.g. `1s`, `1.5h`, `300ms`, `2m30s`) in milliseconds; throws on bad input. */
export function parseGoDuration(text: string): number {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let sign = 1;
  let s = text;
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s.startsWith('-') ? -1 : 1;
    s = s.slice(1);
  }
  let ms = 0;
  let pos = 0;
  re.lastIndex = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    ms += Number(m[1]) * UNITS[m[2]];
    pos = re.lastIndex;
  }
  if (s === '' || pos !== s.length) throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
  return sign * ms;
}

/** The path the mux routes on: upstream's preserveSlashes replaces every `//` with `/` first. */
export function routedPath(uri: string): string {
  const path = uri.split('?')[0];
  return path.replaceAll('//', '/');
}
