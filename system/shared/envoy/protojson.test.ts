import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  decode,
  encode,
  formatDuration,
  fromGrpcObject,
  fromJson,
  ProtoJsonError,
  packAny,
  timestampString,
  toGrpcObject,
  toJson,
  unpackAny,
} from './protojson.ts';
import { ADS_METHOD, adsService, envoyRoot, lookupType, TYPE_URL, typeNameOf } from './protos.ts';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

function errorOf(fn: () => unknown): ProtoJsonError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProtoJsonError) return err;
    throw err;
  }
  throw new Error('expected a ProtoJsonError');
}

describe('protos', () => {
  it('resolves every type the project uses', () => {
    for (const name of [
      'envoy.config.bootstrap.v3.Bootstrap',
      'envoy.config.listener.v3.Listener',
      'envoy.config.route.v3.RouteConfiguration',
      'envoy.config.cluster.v3.Cluster',
      'envoy.config.endpoint.v3.ClusterLoadAssignment',
      'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      'envoy.extensions.filters.http.router.v3.Router',
      'envoy.extensions.filters.http.cors.v3.Cors',
      'envoy.extensions.filters.http.cors.v3.CorsPolicy',
      'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      'envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
      'envoy.extensions.filters.http.fault.v3.HTTPFault',
      'envoy.admin.v3.BootstrapConfigDump',
      'envoy.admin.v3.ListenersConfigDump.DynamicListener',
      'envoy.admin.v3.RoutesConfigDump',
      'envoy.admin.v3.ClustersConfigDump',
      'envoy.admin.v3.EndpointsConfigDump',
      'envoy.admin.v3.SecretsConfigDump',
      'envoy.admin.v3.ScopedRoutesConfigDump',
      'envoy.admin.v3.ConfigDump',
      'envoy.service.discovery.v3.DiscoveryRequest',
      'envoy.service.discovery.v3.DiscoveryResponse',
      'google.protobuf.Duration',
      'google.protobuf.Struct',
    ]) {
      expect(lookupType(name).fullName).toBe('.' + name);
    }
    expect(envoyRoot()).toBe(envoyRoot());
  });

  it('loads a package outside the preloaded set on first lookup', () => {
    expect(lookupType('envoy.extensions.filters.http.lua.v3.Lua').fullName).toBe(
      '.envoy.extensions.filters.http.lua.v3.Lua',
    );
    expect(() => lookupType('envoy.extensions.filters.http.nope.v3.Nope')).toThrow(/unknown protobuf type/);
  });

  it('names the xDS type URLs', () => {
    expect(TYPE_URL.listener).toBe('type.googleapis.com/envoy.config.listener.v3.Listener');
    expect(TYPE_URL.routeConfiguration).toBe('type.googleapis.com/envoy.config.route.v3.RouteConfiguration');
    expect(TYPE_URL.cluster).toBe('type.googleapis.com/envoy.config.cluster.v3.Cluster');
    expect(TYPE_URL.clusterLoadAssignment).toBe('type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment');
    for (const url of Object.values(TYPE_URL)) expect(lookupType(typeNameOf(url))).toBeTruthy();
  });

  it('reads proto-loader objects back as canonical JSON (the node of a DiscoveryRequest)', () => {
    const m = adsService().StreamAggregatedResources!;
    const node = toGrpcObject('envoy.config.core.v3.Node', {
      id: 'gw-0.ns',
      cluster: 'gw.ns',
      metadata: { role: 'gwvendor-kube-gateway-api~ns~gw', n: 2 },
      locality: { zone: 'z' },
    });
    const req = m.requestDeserialize(m.requestSerialize({ type_url: TYPE_URL.cluster, node })) as any;
    expect(fromGrpcObject('envoy.config.core.v3.Node', req.node)).toEqual({
      id: 'gw-0.ns',
      cluster: 'gw.ns',
      metadata: { role: 'gwvendor-kube-gateway-api~ns~gw', n: 2 },
      locality: { zone: 'z' },
    });
  });

  it('gives the grpc-js ADS service definition with Any resources as bytes', () => {
    const svc = adsService();
    const m = svc.StreamAggregatedResources!;
    expect(m.path).toBe(ADS_METHOD.stream);
    expect(m.requestStream && m.responseStream).toBe(true);
    expect(svc.DeltaAggregatedResources!.path).toBe(ADS_METHOD.delta);
    const bytes = m.responseSerialize({
      version_info: '3',
      type_url: TYPE_URL.cluster,
      nonce: 'n1',
      resources: [packAny({ '@type': TYPE_URL.cluster, name: 'c1', connect_timeout: '1s' })],
    });
    const back = m.responseDeserialize(bytes) as any;
    expect(back.version_info).toBe('3');
    expect(back.resources[0].type_url).toBe(TYPE_URL.cluster);
    expect(unpackAny(back.resources[0])).toEqual({ '@type': TYPE_URL.cluster, name: 'c1', connect_timeout: '1s' });
    const req = m.requestDeserialize(
      m.requestSerialize({ type_url: TYPE_URL.listener, error_detail: { code: 3, message: 'bad' }, node: { id: 'n' } }),
    ) as any;
    expect(req.error_detail).toMatchObject({ code: 3, message: 'bad' });
    expect(req.node.id).toBe('n');
  });
});

describe('well-known types', () => {
  const cluster = (extra: Record<string, unknown>) =>
    canonicalize('envoy.config.cluster.v3.Cluster', { name: 'c', ...extra });

  it('Duration: parses fractional and whole seconds and prints the canonical form', () => {
    expect(cluster({ connect_timeout: '1.5s' }).connect_timeout).toBe('1.500s');
    expect(cluster({ connect_timeout: '15s' }).connect_timeout).toBe('15s');
    expect(cluster({ connect_timeout: '0.000001s' }).connect_timeout).toBe('0.000001s');
    expect(cluster({ connect_timeout: '0.000000001s' }).connect_timeout).toBe('0.000000001s');
    expect(cluster({ connect_timeout: '0s' }).connect_timeout).toBe('0s');
    expect(formatDuration(-1n, -500_000_000)).toBe('-1.500s');
    const m = fromJson('google.protobuf.Duration', '2.25s') as any;
    expect(String(m.seconds)).toBe('2');
    expect(m.nanos).toBe(250_000_000);
  });

  it('Duration: rejects other forms with the path', () => {
    for (const bad of ['1.5', '1m', 1.5, '1.0000000001s', '', 's']) {
      const e = errorOf(() => fromJson('envoy.config.cluster.v3.Cluster', { name: 'c', connect_timeout: bad }));
      expect(e.path).toBe('connect_timeout');
      expect(e.message).toMatch(/^connect_timeout: invalid duration/);
    }
  });

  it('Timestamp: RFC 3339 in and out, offsets normalized to UTC', () => {
    const t = (v: string) => toJson('google.protobuf.Timestamp', fromJson('google.protobuf.Timestamp', v)).value;
    expect(t('2024-01-02T03:04:05Z')).toBe('2024-01-02T03:04:05Z');
    expect(t('2024-01-02T03:04:05.5Z')).toBe('2024-01-02T03:04:05.500Z');
    expect(t('2024-01-02T03:04:05.123456Z')).toBe('2024-01-02T03:04:05.123456Z');
    expect(t('2024-01-02T05:04:05+02:00')).toBe('2024-01-02T03:04:05Z');
    expect(timestampString(Date.UTC(2025, 4, 19, 7, 37, 58, 89))).toBe('2025-05-19T07:37:58.089Z');
    expect(errorOf(() => fromJson('google.protobuf.Timestamp', '2024-02-30T00:00:00Z')).message).toMatch(
      /no such date/,
    );
    expect(errorOf(() => fromJson('google.protobuf.Timestamp', 'yesterday')).message).toMatch(/invalid timestamp/);
  });

  it('wrappers are unwrapped both ways, and a wrapped object is rejected', () => {
    const c = cluster({
      per_connection_buffer_limit_bytes: 1024,
      circuit_breakers: { thresholds: [{ max_connections: 5, max_pending_requests: '7', track_remaining: true }] },
      common_lb_config: { healthy_panic_threshold: { value: 50 } },
    });
    expect(c.per_connection_buffer_limit_bytes).toBe(1024);
    expect((c.circuit_breakers as any).thresholds[0]).toEqual({
      max_connections: 5,
      max_pending_requests: 7,
      track_remaining: true,
    });
    // common_lb_config.healthy_panic_threshold is a Percent message (not a wrapper): {value: 50}
    expect((c.common_lb_config as any).healthy_panic_threshold).toEqual({ value: 50 });
    // A zero wrapper is still present (wrappers have presence).
    expect(cluster({ per_connection_buffer_limit_bytes: 0 }).per_connection_buffer_limit_bytes).toBe(0);
    const e = errorOf(() => cluster({ per_connection_buffer_limit_bytes: { value: 3 } }));
    expect(e.path).toBe('per_connection_buffer_limit_bytes');
    const bv = canonicalize('envoy.config.route.v3.VirtualHost', {
      name: 'v',
      domains: ['*'],
      include_request_attempt_count: true,
      routes: [{ match: { prefix: '/', case_sensitive: false } }],
    });
    expect((bv.routes as any)[0].match.case_sensitive).toBe(false);
  });

  it('Struct and Value hold plain JSON', () => {
    const meta = {
      filter_metadata: { 'merge.TrafficPolicy': { a: 1.5, b: 'x', c: null, d: [true, { e: [] }], f: {} } },
    };
    expect(canonicalize('envoy.config.core.v3.Metadata', meta)).toEqual(meta);
    const v = toJson('google.protobuf.Struct', fromJson('google.protobuf.Struct', { n: -2, s: '' }));
    expect(v).toEqual({ n: -2, s: '' });
  });

  it('FieldMask is a comma-separated camelCase string', () => {
    const m = fromJson('google.protobuf.FieldMask', 'cluster.name,lastUpdated') as any;
    expect(m.paths).toEqual(['cluster.name', 'last_updated']);
    expect(toJson('google.protobuf.FieldMask', m).value).toBe('cluster.name,lastUpdated');
  });

  it('Empty is {}', () => {
    expect(canonicalize('google.protobuf.Empty', {})).toEqual({});
    expect(() => fromJson('google.protobuf.Empty', { a: 1 })).toThrow(ProtoJsonError);
  });
});

describe('Any', () => {
  it('packs and unpacks by @type, including an Any nested in an Any', () => {
    const inner = { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'c', connect_timeout: '2s' };
    const outer = { '@type': 'type.googleapis.com/google.protobuf.Any', value: inner };
    const any = packAny(outer);
    expect(any.type_url).toBe('type.googleapis.com/google.protobuf.Any');
    expect(unpackAny(any)).toEqual(outer);
    // ... and an Any of a well-known type keeps its JSON under "value".
    const dur = { '@type': 'type.googleapis.com/google.protobuf.Duration', value: '1.500s' };
    expect(unpackAny(packAny(dur))).toEqual(dur);
    const st = { '@type': 'type.googleapis.com/google.protobuf.Struct', value: { a: [1] } };
    expect(unpackAny(packAny(st))).toEqual(st);
  });

  it('decodes typed_config in a listener (HCM with inline routes and the router filter)', () => {
    const listener = {
      name: 'listener~8080',
      address: { socket_address: { address: '0.0.0.0', port_value: 8080 } },
      filter_chains: [
        {
          filters: [
            {
              name: 'envoy.filters.network.http_connection_manager',
              typed_config: {
                '@type': HCM,
                stat_prefix: 'http',
                strip_any_host_port: true,
                rds: { route_config_name: 'listener~8080', config_source: { ads: {}, resource_api_version: 'V3' } },
                http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
              },
            },
          ],
        },
      ],
    };
    const bytes = encode('envoy.config.listener.v3.Listener', listener);
    expect(decode('envoy.config.listener.v3.Listener', bytes)).toEqual(listener);
  });

  it('rejects an unknown @type and a missing @type, naming the path', () => {
    const e = errorOf(() =>
      fromJson('envoy.config.listener.v3.Filter', {
        name: 'f',
        typed_config: { '@type': 'type.googleapis.com/no.Such' },
      }),
    );
    expect(e.path).toBe('typed_config.@type');
    expect(e.message).toContain('unknown @type "type.googleapis.com/no.Such"');
    const m = errorOf(() =>
      fromJson('envoy.config.listener.v3.Filter', { name: 'f', typed_config: { stat_prefix: 'x' } }),
    );
    expect(m.message).toBe('typed_config: missing "@type" in google.protobuf.Any');
  });

  it('reports errors inside an Any with the full path', () => {
    const e = errorOf(() =>
      fromJson('envoy.config.listener.v3.Listener', {
        name: 'l',
        filter_chains: [
          { filters: [{ name: 'h', typed_config: { '@type': HCM, stat_prefix: 'x', strip_any_host_prot: true } }] },
        ],
      }),
    );
    expect(e.path).toBe('filter_chains[0].filters[0].typed_config.strip_any_host_prot');
    expect(e.problem).toContain('unknown field "strip_any_host_prot"');
  });

  it('prints an Any of a type outside the protos raw only when asked', () => {
    const raw = { type_url: 'type.googleapis.com/example.Foreign', value: Buffer.from([8, 1]) };
    expect(() => unpackAny(raw)).toThrow(/unknown @type/);
    expect(unpackAny(raw, { unknownAny: 'raw' })).toEqual({ '@type': raw.type_url, value: 'CAE=' });
  });
});

describe('fields', () => {
  it('enums by name in and out; numbers accepted; unknown names rejected with the choices', () => {
    const c = canonicalize('envoy.config.cluster.v3.Cluster', { name: 'c', type: 'STRICT_DNS', lb_policy: 3 });
    expect(c.type).toBe('STRICT_DNS');
    expect(c.lb_policy).toBe('RANDOM');
    const e = errorOf(() => fromJson('envoy.config.cluster.v3.Cluster', { name: 'c', lb_policy: 'ROUND_ROBBIN' }));
    expect(e.path).toBe('lb_policy');
    expect(e.message).toContain('unknown value "ROUND_ROBBIN" for enum envoy.config.cluster.v3.Cluster.LbPolicy');
    expect(e.message).toContain('ROUND_ROBIN');
    // The default enum value (0) is left out, as Envoy prints it.
    expect(canonicalize('envoy.config.cluster.v3.Cluster', { name: 'c', lb_policy: 'ROUND_ROBIN' })).toEqual({
      name: 'c',
    });
  });

  it('oneofs keep a set default value and refuse two members', () => {
    expect(canonicalize('envoy.config.route.v3.RouteMatch', { prefix: '' })).toEqual({ prefix: '' });
    expect(canonicalize('envoy.config.route.v3.RouteMatch', { path: '/x' })).toEqual({ path: '/x' });
    const e = errorOf(() => fromJson('envoy.config.route.v3.RouteMatch', { prefix: '/', path: '/x' }));
    expect(e.path).toBe('path');
    expect(e.message).toContain('oneof "path_specifier"');
    const action = canonicalize('envoy.config.route.v3.Route', {
      match: { safe_regex: { regex: '/a.*' } },
      direct_response: { status: 200, body: { inline_string: 'ok' } },
    });
    expect(action).toEqual({
      match: { safe_regex: { regex: '/a.*' } },
      direct_response: { status: 200, body: { inline_string: 'ok' } },
    });
  });

  it('64-bit integers print as strings and accept numbers or strings', () => {
    const cla = canonicalize('envoy.config.route.v3.RetryPolicy.RetryBackOff', { base_interval: '0.025s' });
    expect(cla).toEqual({ base_interval: '0.025s' });
    const fp = canonicalize('envoy.config.bootstrap.v3.Bootstrap', {
      overload_manager: { refresh_interval: '1s' },
      stats_config: { stats_matcher: { reject_all: true } },
    });
    expect(fp).toBeTruthy();
    // uint64 (ClusterStats.total_dropped_requests) and int64 (Duration seconds) round-trip as strings.
    const stats = canonicalize('envoy.config.endpoint.v3.ClusterStats', {
      cluster_name: 'c',
      total_dropped_requests: '18446744073709551615',
    });
    expect(stats.total_dropped_requests).toBe('18446744073709551615');
    const s2 = canonicalize('envoy.config.endpoint.v3.ClusterStats', { cluster_name: 'c', total_dropped_requests: 42 });
    expect(s2.total_dropped_requests).toBe('42');
    const neg = toJson('google.protobuf.Int64Value', fromJson('google.protobuf.Int64Value', '-9223372036854775808'));
    expect(neg.value).toBe('-9223372036854775808');
    const e = errorOf(() => fromJson('envoy.config.endpoint.v3.ClusterStats', { total_dropped_requests: '-1' }));
    expect(e.message).toContain('out of range for uint64');
    const f = errorOf(() => fromJson('envoy.config.endpoint.v3.ClusterStats', { total_dropped_requests: 'many' }));
    expect(f.path).toBe('total_dropped_requests');
  });

  it('32-bit integers are checked for range and integrality', () => {
    const sa = (port: unknown) => () =>
      fromJson('envoy.config.core.v3.SocketAddress', { address: 'a', port_value: port });
    expect(errorOf(sa(-1)).message).toContain('out of range for uint32');
    expect(errorOf(sa(1.5)).message).toContain('expected an integer');
    expect(canonicalize('envoy.config.core.v3.SocketAddress', { address: 'a', port_value: '80' }).port_value).toBe(80);
  });

  it('accepts camelCase names and prints snake_case', () => {
    const c = canonicalize('envoy.config.cluster.v3.Cluster', {
      name: 'c',
      connectTimeout: '1s',
      lbPolicy: 'LEAST_REQUEST',
      loadAssignment: {
        clusterName: 'c',
        endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress: { address: 'x', portValue: 1 } } } }] }],
      },
    });
    expect(c).toEqual({
      name: 'c',
      connect_timeout: '1s',
      lb_policy: 'LEAST_REQUEST',
      load_assignment: {
        cluster_name: 'c',
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'x', port_value: 1 } } } }] }],
      },
    });
    const e = errorOf(() =>
      fromJson('envoy.config.cluster.v3.Cluster', { name: 'c', connect_timeout: '1s', connectTimeout: '2s' }),
    );
    expect(e.message).toContain('set twice');
  });

  it('names the JSON path of unknown fields and type mismatches', () => {
    const e = errorOf(() =>
      fromJson('envoy.config.bootstrap.v3.Bootstrap', {
        static_resources: { clusters: [{ name: 'a' }, { name: 'b', load_assignment: { endpoints: 'x' } }] },
      }),
    );
    expect(e.path).toBe('static_resources.clusters[1].load_assignment.endpoints');
    expect(e.message).toContain('expected an array');
    const u = errorOf(() => fromJson('envoy.config.bootstrap.v3.Bootstrap', { nodee: {} }));
    expect(u.message).toBe('nodee: unknown field "nodee" in envoy.config.bootstrap.v3.Bootstrap');
    const s = errorOf(() => fromJson('envoy.config.core.v3.Node', { id: 5 }));
    expect(s.message).toBe('id: expected a string, got number 5');
    const b = errorOf(() => fromJson('envoy.config.route.v3.RouteMatch', { prefix: '/', case_sensitive: 'yes' }));
    expect(b.path).toBe('case_sensitive');
    const top = errorOf(() => fromJson('envoy.config.core.v3.Node', []));
    expect(top.message).toMatch(/^<root>: expected an object/);
  });

  it('maps keep their keys, bytes are base64, doubles and floats print naturally', () => {
    const l = canonicalize('envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit', {
      stat_prefix: 'rl',
      token_bucket: { max_tokens: 10, tokens_per_fill: 1, fill_interval: '1s' },
      filter_enabled: { default_value: { numerator: 100, denominator: 'HUNDRED' }, runtime_key: 'k' },
    });
    expect(l.token_bucket).toEqual({ max_tokens: 10, tokens_per_fill: 1, fill_interval: '1s' });
    const bytes = canonicalize('envoy.config.core.v3.DataSource', { inline_bytes: 'aGVsbG8=' });
    expect(bytes).toEqual({ inline_bytes: 'aGVsbG8=' });
    const pct = canonicalize('envoy.type.v3.Percent', { value: 12.5 });
    expect(pct).toEqual({ value: 12.5 });
    const nan = canonicalize('envoy.type.v3.Percent', { value: 'NaN' });
    expect(nan).toEqual({ value: 'NaN' });
    const fl = canonicalize('google.protobuf.FloatValue', 0.1);
    expect(fl).toEqual({ value: 0.1 });
    const typed = canonicalize('envoy.config.route.v3.Route', {
      match: { prefix: '/' },
      route: { cluster: 'c' },
      typed_per_filter_config: {
        'envoy.filters.http.ext_authz': {
          '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
          disabled: true,
        },
      },
    });
    expect((typed.typed_per_filter_config as any)['envoy.filters.http.ext_authz'].disabled).toBe(true);
  });

  it('null means unset, except for a Value', () => {
    expect(canonicalize('envoy.config.core.v3.Node', { id: null, cluster: 'c' })).toEqual({ cluster: 'c' });
  });

  it('decodes admin dumps whose Anys hold resources', () => {
    const dump = {
      configs: [
        {
          '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
          version_info: '3',
          dynamic_listeners: [
            {
              name: 'l',
              active_state: {
                version_info: '3',
                listener: { '@type': TYPE_URL.listener, name: 'l' },
                last_updated: '2025-01-01T00:00:00.123Z',
              },
              error_state: {
                failed_configuration: { '@type': TYPE_URL.listener, name: 'l', stat_prefix: 'x' },
                last_update_attempt: '2025-01-01T00:00:01Z',
                details: 'bad',
                version_info: '4',
              },
              client_status: 'NACKED',
            },
          ],
        },
      ],
    };
    expect(canonicalize('envoy.admin.v3.ConfigDump', dump)).toEqual(dump);
  });
});
