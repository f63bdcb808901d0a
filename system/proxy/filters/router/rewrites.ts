// The router's URL work, as Envoy's route entries do it: a route's prefix or regex rewrite of the path (the query
// kept), the Location of a redirect (scheme, host, port, path or prefix rewrite, query stripping) and the shadow
// authority of a mirrored request; the path and host rewrites of the headers a forwarded request (or upgrade) takes
// upstream.
import type { Re2 } from '../../../shared/regex.ts';
import type { RedirectConfig, RouteActionConfig, WeightedCluster } from '../../config/route.ts';
import type { HeaderMap } from '../../stream-info.ts';
import type { FilterStream } from '../filter-api.ts';

/** A path without its query string. */
export function pathOnly(p: string): string {
  const q = p.indexOf('?');
  return q < 0 ? p : p.slice(0, q);
}

/** Applies a route's (or redirect's) prefix or regex rewrite to a path, keeping the query. */
export function rewritePath(
  s: FilterStream,
  prefixRewrite: string | undefined,
  regexRewrite: { re: Re2; sub: string } | undefined,
): string | undefined {
  const q = s.path.indexOf('?');
  const path = q < 0 ? s.path : s.path.slice(0, q);
  const query = q < 0 ? '' : s.path.slice(q);
  if (prefixRewrite !== undefined) {
    const spec = s.route!.spec;
    if (spec.kind === 'prefix' || spec.kind === 'path' || spec.kind === 'path_separated_prefix') {
      const matched = spec.value.length;
      let rest = path.slice(matched);
      let prefix = prefixRewrite;
      // path_separated_prefix keeps the separator: rewriting "/a" to "/b" turns "/a/x" into "/b/x".
      if (prefix === '' && rest === '') rest = '/';
      if (prefix.endsWith('/') && rest.startsWith('/')) prefix = prefix.slice(0, -1);
      return prefix + rest + query;
    }
    return undefined;
  }
  if (regexRewrite) return regexRewrite.re.replaceAll(path, regexRewrite.sub) + query;
  return undefined;
}

/** The Location header of a redirect route. */
export function redirectLocation(s: FilterStream, r: RedirectConfig): string {
  // Envoy: the scheme of the original URL (:scheme), not the connection's security.
  const scheme = r.scheme ?? s.scheme;
  let host = s.host;
  let port: string | undefined;
  const colon = host.lastIndexOf(':');
  if (colon > 0 && host.lastIndexOf(']') < colon) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (r.host !== undefined && r.host !== '') {
    host = r.host;
    // A host_redirect with its own port replaces both.
    if (host.lastIndexOf(':') > host.lastIndexOf(']')) port = undefined;
  }
  if (r.port) port = String(r.port);
  else if (r.scheme === 'https' && port === '80') port = undefined;
  else if (r.scheme === 'http' && port === '443') port = undefined;
  let path = s.path;
  if (r.pathRedirect !== undefined) {
    path = r.pathRedirect;
    // path_redirect replaces the query only when it has one of its own.
    if (!path.includes('?') && !r.stripQuery) {
      const q = s.path.indexOf('?');
      if (q >= 0) path += s.path.slice(q);
    }
  } else {
    path = rewritePath(s, r.prefixRewrite, r.regexRewrite) ?? s.path;
  }
  if (r.stripQuery) {
    const q = path.indexOf('?');
    if (q >= 0) path = path.slice(0, q);
  }
  return `${scheme}://${host}${port ? `:${port}` : ''}${path}`;
}

/** Envoy's shadow authority: "-shadow" appended to the host, before any port. */
export function shadowHost(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon > 0 && host.lastIndexOf(']') < colon) return `${host.slice(0, colon)}-shadow${host.slice(colon)}`;
  return `${host}-shadow`;
}

/**
 * The route's rewrites of the request headers `h` going upstream, as Envoy's RouteEntryImplBase::finalizeRequestHeaders
 * does them: the path (prefix or regex rewrite; the original in x-envoy-original-path), then the host (the weighted
 * cluster's host_rewrite_literal before the route's, else host_rewrite_header, else host_rewrite_path_regex).
 * Returns the upstream path.
 */
export function rewriteUpstream(
  s: FilterStream,
  h: HeaderMap,
  a: RouteActionConfig,
  weighted: WeightedCluster | undefined,
): string {
  let path = s.path;
  const rewritten = rewritePath(s, a.prefixRewrite, a.regexRewrite);
  if (rewritten !== undefined && rewritten !== s.path) {
    h['x-envoy-original-path'] = s.path;
    path = rewritten;
  }
  const hostRewrite = weighted?.hostRewriteLiteral ?? a.hostRewriteLiteral;
  if (hostRewrite) h.host = hostRewrite;
  else if (a.hostRewriteHeader) {
    const v = s.header(a.hostRewriteHeader);
    if (v) h.host = v;
  } else if (a.hostRewritePathRegex) {
    h.host = a.hostRewritePathRegex.re.replaceAll(pathOnly(s.path), a.hostRewritePathRegex.sub);
  }
  return path;
}
