// Unit tests of the compiled route table: virtual host lookup order, route matches, actions and their Envoy errors.
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../shared/envoy/protojson.ts';
import type { CompiledRoute, MatchInput } from './route.ts';
import { compileRouteConfiguration } from './route-table.ts';

type J = Record<string, any>;

function table(vhosts: J[], extra: J = {}) {
  // Through the protos first, as every route configuration the proxy sees.
  const rc = canonicalize('envoy.config.route.v3.RouteConfiguration', { name: 'rc', virtual_hosts: vhosts, ...extra });
  return compileRouteConfiguration(rc, { validateClustersDefault: false });
}

function input(path: string, headers: Record<string, string> = {}): MatchInput {
  const q = path.indexOf('?');
  return {
    path: q < 0 ? path : path.slice(0, q),
    query: q < 0 ? '' : path.slice(q + 1),
    header: (n) => headers[n],
  };
}

const ok = (name: string, match: J) => ({ name, match, direct_response: { status: 200 } });

describe('virtual host selection (Envoy domain search order)', () => {
  const t = table([
    { name: 'exact', domains: ['www.example.com', 'WWW.UPPER.COM'], routes: [ok('r', { prefix: '/' })] },
    { name: 'suffix-long', domains: ['*.api.example.com'], routes: [ok('r', { prefix: '/' })] },
    { name: 'suffix', domains: ['*.example.com'], routes: [ok('r', { prefix: '/' })] },
    { name: 'suffix-dash', domains: ['*-bar.foo.com'], routes: [ok('r', { prefix: '/' })] },
    { name: 'prefix', domains: ['foo.*'], routes: [ok('r', { prefix: '/' })] },
    { name: 'prefix-long', domains: ['foo.bar.*'], routes: [ok('r', { prefix: '/' })] },
    { name: 'port', domains: ['example.org:8080'], routes: [ok('r', { prefix: '/' })] },
    { name: 'default', domains: ['*'], routes: [ok('r', { prefix: '/' })] },
  ]);
  const vh = (host: string) => t.findVirtualHost(host)?.name;

  it('exact first, case-insensitive', () => {
    expect(vh('www.example.com')).toBe('exact');
    expect(vh('WWW.EXAMPLE.COM')).toBe('exact');
    expect(vh('www.upper.com')).toBe('exact');
  });
  it('longest suffix wildcard, which never matches the empty string', () => {
    expect(vh('a.api.example.com')).toBe('suffix-long');
    expect(vh('a.example.com')).toBe('suffix');
    expect(vh('baz-bar.foo.com')).toBe('suffix-dash');
    expect(vh('-bar.foo.com')).toBe('default');
    expect(vh('.example.com')).toBe('default');
  });
  it('then longest prefix wildcard', () => {
    expect(vh('foo.bar.baz')).toBe('prefix-long');
    expect(vh('foo.com')).toBe('prefix');
  });
  it('then *; the Host port is part of the name unless the HCM strips it', () => {
    expect(vh('other.net')).toBe('default');
    expect(vh('www.example.com:8080')).toBe('default');
    expect(vh('example.org:8080')).toBe('port');
  });
  it('costs one probe per distinct wildcard length, not per virtual host', () => {
    const many = table(
      Array.from({ length: 2000 }, (_, i) => ({
        name: `v${i}`,
        domains: [`host${i}.example.com`, `*.w${i}.example.com`],
        routes: [ok('r', { prefix: '/' })],
      })),
    );
    expect(many.findVirtualHost('host1999.example.com')?.name).toBe('v1999');
    expect(many.findVirtualHost('x.w1234.example.com')?.name).toBe('v1234');
    expect(many.findVirtualHost('nothing')).toBeUndefined();
    // 2000 suffix domains but only 4 distinct lengths (".w0.example.com" .. ".w1999.example.com").
    expect((many as unknown as { suffixLengths: number[] }).suffixLengths.length).toBe(4);
  });

  it('rejects duplicate domains and duplicate virtual host names', () => {
    expect(() =>
      table([
        { name: 'a', domains: ['x.com'], routes: [] },
        { name: 'b', domains: ['X.com'], routes: [] },
      ]),
    ).toThrow('Only unique values for domains are permitted. Duplicate entry of domain X.com in route rc');
    expect(() =>
      table([
        { name: 'a', domains: ['*'], routes: [] },
        { name: 'b', domains: ['*'], routes: [] },
      ]),
    ).toThrow(/Duplicate entry of domain \*/);
    expect(() =>
      table([
        { name: 'a', domains: ['x'], routes: [] },
        { name: 'a', domains: ['y'], routes: [] },
      ]),
    ).toThrow(/virtual host names/);
  });
});

describe('route matching', () => {
  const routeOf = (match: J, path: string, headers: Record<string, string> = {}): boolean => {
    const t = table([{ name: 'v', domains: ['*'], routes: [ok('r', match)] }]);
    return t.route('h', input(path, headers)) !== undefined;
  };

  it('prefix, path, safe_regex (full match), path_separated_prefix; the query string is not part of the path', () => {
    expect(routeOf({ prefix: '/api' }, '/api/x?y=1')).toBe(true);
    expect(routeOf({ prefix: '/api' }, '/apix')).toBe(true);
    expect(routeOf({ prefix: '/api' }, '/ap')).toBe(false);
    expect(routeOf({ path: '/exact' }, '/exact?q')).toBe(true);
    expect(routeOf({ path: '/exact' }, '/exact/')).toBe(false);
    expect(routeOf({ safe_regex: { regex: '/v[0-9]+/.*' } }, '/v2/items')).toBe(true);
    expect(routeOf({ safe_regex: { regex: '/v[0-9]+' } }, '/v2/items')).toBe(false);
    expect(routeOf({ path_separated_prefix: '/api' }, '/api')).toBe(true);
    expect(routeOf({ path_separated_prefix: '/api' }, '/api/x')).toBe(true);
    expect(routeOf({ path_separated_prefix: '/api' }, '/apix')).toBe(false);
  });

  it('case_sensitive: false applies to prefix and path', () => {
    expect(routeOf({ prefix: '/API', case_sensitive: false }, '/api/x')).toBe(true);
    expect(routeOf({ prefix: '/API' }, '/api/x')).toBe(false);
    expect(routeOf({ path: '/A', case_sensitive: false }, '/a')).toBe(true);
  });

  it('headers (every matcher must match) and query parameters', () => {
    const match = {
      prefix: '/',
      headers: [
        { name: 'x-env', string_match: { exact: 'canary' } },
        { name: 'x-debug', present_match: true, invert_match: true },
      ],
      query_parameters: [{ name: 'v', string_match: { exact: '2' } }],
    };
    expect(routeOf(match, '/?v=2', { 'x-env': 'canary' })).toBe(true);
    expect(routeOf(match, '/?v=2', { 'x-env': 'canary', 'x-debug': '1' })).toBe(false);
    expect(routeOf(match, '/?v=3', { 'x-env': 'canary' })).toBe(false);
    expect(routeOf(match, '/?v=2', { 'x-env': 'prod' })).toBe(false);
    expect(
      routeOf({ prefix: '/', headers: [{ name: ':method', exact_match: 'POST' }] }, '/', { ':method': 'POST' }),
    ).toBe(true);
  });

  it('first matching route wins, in order', () => {
    const t = table([
      { name: 'v', domains: ['*'], routes: [ok('specific', { path: '/a' }), ok('catchall', { prefix: '/' })] },
    ]);
    expect(t.route('h', input('/a'))?.name).toBe('specific');
    expect(t.route('h', input('/b'))?.name).toBe('catchall');
  });

  it('rejects what Envoy rejects', () => {
    const bad = (routes: J[]) => () => table([{ name: 'v', domains: ['*'], routes }]);
    expect(bad([{ match: { safe_regex: { regex: '[' } }, route: { cluster: 'c' } }])).toThrow(/^Invalid regex '\['/);
    expect(
      bad([
        {
          match: { prefix: '/' },
          route: { cluster: 'c', prefix_rewrite: '/a', regex_rewrite: { pattern: { regex: 'a' }, substitution: 'b' } },
        },
      ]),
    ).toThrow(/Cannot specify both prefix_rewrite and regex_rewrite/);
    expect(
      bad([
        {
          match: { prefix: '/' },
          route: { cluster: 'c', regex_rewrite: { pattern: { regex: '(a)' }, substitution: '\\2' } },
        },
      ]),
    ).toThrow(/requested group 2/);
    expect(
      bad([{ match: { prefix: '/' }, route: { weighted_clusters: { clusters: [{ name: 'a', weight: 0 }] } } }]),
    ).toThrow(/greater than 0/);
    expect(bad([{ match: { prefix: '/' } }])).toThrow(/no action/);
    expect(bad([{ match: { prefix: '/' }, direct_response: { status: 700 } }])).toThrow(/range/);
    expect(bad([{ match: { path_separated_prefix: '/a/' }, route: { cluster: 'c' } }])).toThrow(
      /path_separated_prefix/,
    );
  });
});

describe('actions and per-route settings', () => {
  const only = (r: J, vh: J = {}, rc: J = {}): CompiledRoute => {
    const t = table([{ name: 'v', domains: ['*'], routes: [r], ...vh }], rc);
    return t.virtualHosts[0]!.routes[0]!;
  };

  it('route: defaults (timeout 15 s, 503 when the cluster is missing) and the settings Envoy has', () => {
    const a = only({ match: { prefix: '/' }, route: { cluster: 'c' } }).action;
    expect(a).toMatchObject({ kind: 'route', cluster: 'c', timeoutMs: 15000, notFoundCode: 503, mirrors: [] });
    const b = only({
      match: { prefix: '/' },
      route: {
        cluster: 'c',
        timeout: '0s',
        cluster_not_found_response_code: 'NOT_FOUND',
        host_rewrite_literal: 'upstream.local',
        retry_policy: {
          retry_on: '5xx,connect-failure',
          num_retries: 3,
          per_try_timeout: '0.5s',
          retriable_status_codes: [418],
        },
        request_mirror_policies: [{ cluster: 'shadow', runtime_fraction: { default_value: { numerator: 50 } } }],
      },
    }).action;
    expect(b).toMatchObject({
      timeoutMs: 0,
      notFoundCode: 404,
      hostRewriteLiteral: 'upstream.local',
      mirrors: [{ cluster: 'shadow', fraction: 0.5 }],
    });
    if (b.kind !== 'route') throw new Error('route');
    expect([...b.retry!.retryOn]).toEqual(['5xx', 'connect-failure']);
    expect(b.retry).toMatchObject({ numRetries: 3, perTryTimeoutMs: 500, baseIntervalMs: 25, maxIntervalMs: 250 });
    expect(b.retry!.retriableStatusCodes.has(418)).toBe(true);
  });

  it('a virtual host retry policy is the default for its routes', () => {
    const a = only(
      { match: { prefix: '/' }, route: { cluster: 'c' } },
      { retry_policy: { retry_on: 'gateway-error' } },
    ).action;
    if (a.kind !== 'route') throw new Error('route');
    expect(a.retry?.numRetries).toBe(1);
    expect(a.retry?.retryOn.has('gateway-error')).toBe(true);
  });

  it('weighted clusters, redirect, direct response', () => {
    const w = only({
      match: { prefix: '/' },
      route: {
        weighted_clusters: {
          clusters: [
            { name: 'a', weight: 70 },
            { name: 'b', weight: 30 },
          ],
        },
      },
    }).action;
    expect(w).toMatchObject({
      kind: 'route',
      weighted: {
        total: 100,
        clusters: [
          { name: 'a', weight: 70 },
          { name: 'b', weight: 30 },
        ],
      },
    });
    const r = only({
      match: { prefix: '/' },
      redirect: { https_redirect: true, response_code: 'PERMANENT_REDIRECT', strip_query: true },
    }).action;
    expect(r).toMatchObject({ kind: 'redirect', scheme: 'https', code: 308, stripQuery: true });
    const d = only({
      match: { prefix: '/' },
      direct_response: { status: 418, body: { inline_string: 'teapot' } },
    }).action;
    expect(d.kind === 'direct' && d.body?.toString()).toBe('teapot');
  });

  it('header mutations apply route, then virtual host, then route configuration (or reversed)', () => {
    const mk = (key: string, value: string) => ({
      header: { key, value },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    });
    const routeLevel = {
      match: { prefix: '/' },
      route: { cluster: 'c' },
      request_headers_to_add: [mk('x-a', 'route')],
    };
    const r = only(
      routeLevel,
      { request_headers_to_add: [mk('x-a', 'vhost')] },
      { request_headers_to_add: [mk('x-a', 'global')] },
    );
    expect(r.requestMutations).toHaveLength(3);
    const r2 = only(
      routeLevel,
      { request_headers_to_add: [mk('x-a', 'vhost')] },
      {
        request_headers_to_add: [mk('x-a', 'global')],
        most_specific_header_mutations_wins: true,
      },
    );
    // The last mutation applied wins an overwrite: global by default, the route's with most_specific.
    const last = (x: CompiledRoute) => x.requestMutations.at(-1)!.add[0]!.value({} as never);
    expect(last(r)).toBe('global');
    expect(last(r2)).toBe('route');
    expect(() =>
      only({ match: { prefix: '/' }, route: { cluster: 'c' }, request_headers_to_add: [mk('host', 'x')] }),
    ).toThrow(/may not be modified/);
  });

  it('per-filter configs: the most specific wins; an unknown type is rejected; FilterConfig can disable', () => {
    const fault = (pct: number) => ({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
      abort: { http_status: 503, percentage: { numerator: pct } },
    });
    const r = only(
      {
        match: { prefix: '/' },
        route: { cluster: 'c' },
        typed_per_filter_config: { 'envoy.filters.http.fault': fault(10) },
      },
      {
        typed_per_filter_config: {
          'envoy.filters.http.fault': fault(20),
          'envoy.filters.http.ext_authz': {
            '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig',
            disabled: true,
          },
        },
      },
    );
    expect(r.perFilter.get('envoy.filters.http.fault')).toMatchObject({ abortFraction: 0.1 });
    expect(r.perFilter.get('envoy.filters.http.ext_authz')).toEqual({ disabled: true });
    expect(() =>
      only({
        match: { prefix: '/' },
        route: { cluster: 'c' },
        typed_per_filter_config: {
          x: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.LuaPerRoute', disabled: true },
        },
      }),
    ).toThrow(/Didn't find a registered implementation/);
  });

  it('validate_clusters checks cluster names when asked (static route configs)', () => {
    const rc = canonicalize('envoy.config.route.v3.RouteConfiguration', {
      name: 'rc',
      virtual_hosts: [
        { name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'missing' } }] },
      ],
    });
    expect(() => compileRouteConfiguration(rc, { validateClustersDefault: true, clusterExists: () => false })).toThrow(
      "route: unknown cluster 'missing'",
    );
    expect(() =>
      compileRouteConfiguration(rc, { validateClustersDefault: false, clusterExists: () => false }),
    ).not.toThrow();
  });

  it('compiles a 1,000-route configuration', () => {
    const routes = Array.from({ length: 1000 }, (_, i) => ({
      match: { prefix: `/svc${i}/`, headers: [{ name: 'x-v', string_match: { exact: String(i % 3) } }] },
      route: { cluster: `c${i % 10}`, regex_rewrite: { pattern: { regex: `^/svc${i}/(.*)` }, substitution: '/\\1' } },
    }));
    const t = table([{ name: 'v', domains: ['*'], routes }]);
    expect(t.route('h', input('/svc999/x', { 'x-v': '0' }))?.action).toMatchObject({ cluster: 'c9' });
  });
});
