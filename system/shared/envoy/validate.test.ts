import { describe, expect, it } from 'vitest';
import { canonicalize } from './protojson.ts';
import { assertValid, ProtoValidationError, validateJson } from './validate.ts';

const rc = (vh: Record<string, unknown>) =>
  canonicalize('envoy.config.route.v3.RouteConfiguration', { name: 'rc', virtual_hosts: [vh] });

describe('protoc-gen-validate constraints (Envoy MessageUtil::validate)', () => {
  it('accepts valid resources', () => {
    expect(
      validateJson(
        'envoy.config.route.v3.RouteConfiguration',
        rc({ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'c' } }] }),
      ),
    ).toBeUndefined();
    expect(
      validateJson('envoy.config.cluster.v3.Cluster', { name: 'c', connect_timeout: '1s', type: 'EDS' }),
    ).toBeUndefined();
  });

  it("repeated min_items inside an embedded message, with Envoy's chained message and the JSON path", () => {
    const v = validateJson('envoy.config.route.v3.RouteConfiguration', rc({ name: 'v', domains: [], routes: [] }));
    expect(v?.path).toBe('virtual_hosts[0].domains');
    expect(v?.chain).toBe(
      'RouteConfigurationValidationError.VirtualHosts[0]: embedded message failed validation | caused by VirtualHostValidationError.Domains: value must contain at least 1 item(s)',
    );
    expect(() => assertValid('envoy.config.route.v3.RouteConfiguration', rc({ name: 'v', domains: [] }))).toThrow(
      ProtoValidationError,
    );
    expect(() => assertValid('envoy.config.route.v3.RouteConfiguration', rc({ name: 'v', domains: [] }))).toThrow(
      /^Proto constraint validation failed \(RouteConfigurationValidationError/,
    );
  });

  it('required messages and required oneofs', () => {
    const noMatch = rc({ name: 'v', domains: ['*'], routes: [{ route: { cluster: 'c' } }] });
    expect(validateJson('envoy.config.route.v3.RouteConfiguration', noMatch)?.chain).toMatch(
      /RouteValidationError\.Match: value is required$/,
    );
    const noAction = rc({ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' } }] });
    expect(validateJson('envoy.config.route.v3.RouteConfiguration', noAction)?.chain).toMatch(
      /RouteValidationError\.Action: value is required$/,
    );
    const noSpecifier = rc({ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' }, route: {} }] });
    expect(validateJson('envoy.config.route.v3.RouteConfiguration', noSpecifier)?.chain).toMatch(
      /RouteActionValidationError\.ClusterSpecifier: value is required$/,
    );
  });

  it('strings, numbers, durations, enums', () => {
    expect(validateJson('envoy.config.cluster.v3.Cluster', { name: '' })?.chain).toBe(
      'ClusterValidationError.Name: value length must be at least 1 characters',
    );
    expect(validateJson('envoy.config.cluster.v3.Cluster', { name: 'c', connect_timeout: '0s' })?.chain).toBe(
      'ClusterValidationError.ConnectTimeout: value must be greater than 0s',
    );
    expect(validateJson('envoy.config.core.v3.SocketAddress', { address: 'a', port_value: 70000 })?.chain).toBe(
      'SocketAddressValidationError.PortValue: value must be less than or equal to 65535',
    );
    const ds = canonicalize('envoy.config.route.v3.DirectResponseAction', { status: 99 });
    expect(validateJson('envoy.config.route.v3.DirectResponseAction', ds)?.chain).toBe(
      'DirectResponseActionValidationError.Status: value must be inside range [200, 600)',
    );
    expect(validateJson('envoy.config.cluster.v3.Cluster', { name: 'c', lb_policy: 99 })?.chain).toBe(
      'ClusterValidationError.LbPolicy: value must be one of the defined enum values',
    );
    const hdr = canonicalize('envoy.config.core.v3.HeaderValueOption', { header: { key: 'bad\nheader', value: 'x' } });
    expect(validateJson('envoy.config.core.v3.HeaderValueOption', hdr)?.chain).toMatch(
      /HeaderValueValidationError\.Key: value does not match regex pattern/,
    );
  });

  it('follows Any into extension configs (HCM inside a listener)', () => {
    const l = canonicalize('envoy.config.listener.v3.Listener', {
      name: 'l',
      address: { socket_address: { address: '0.0.0.0', port_value: 8080 } },
      filter_chains: [
        {
          filters: [
            {
              name: 'hcm',
              typed_config: {
                '@type':
                  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                stat_prefix: '',
                rds: { route_config_name: 'r', config_source: { ads: {} } },
              },
            },
          ],
        },
      ],
    });
    const v = validateJson('envoy.config.listener.v3.Listener', l);
    expect(v?.path).toBe('filter_chains[0].filters[0].typed_config.stat_prefix');
    expect(v?.chain).toContain(
      'HttpConnectionManagerValidationError.StatPrefix: value length must be at least 1 characters',
    );
  });
});
