// Helpers for the proxy's tests and benchmark: resource builders shaped like the control plane's output (listener
// per port with RDS, EDS clusters named kube_<ns>_<svc>_<port>), an in-process proxy with captured log lines,
// and a tiny HTTP client that can set any Host header.
import http from 'node:http';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import { loadBootstrap, mergeFrom } from '../bootstrap.ts';
import { type LogLevel, LogRegistry } from '../log.ts';
import { type ProxyServer, startProxy } from '../server.ts';

type J = Record<string, any>;

export const HCM_TYPE =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const ROUTER = {
  name: 'envoy.filters.http.router',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
};
export const STDOUT_ACCESS_LOG = {
  name: 'envoy.access_loggers.stdout',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog' },
};

/** A bootstrap like the deployer writes: node, admin, xds_cluster, ADS for LDS and CDS. */
/** A cluster's fields for HTTP/2 to its hosts (HttpProtocolOptions explicit_http_config): xDS and gRPC services. */
export const H2_CLUSTER: J = {
  typed_extension_protocol_options: {
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
      '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
      explicit_http_config: { http2_protocol_options: {} },
    },
  },
};

export function bootstrapJson(opts: {
  xdsPort?: number;
  adminPort?: number;
  staticListeners?: J[];
  staticClusters?: J[];
  flushInterval?: string;
  initialFetchTimeout?: string;
  /** Incremental xDS (ads_config.api_type DELTA_GRPC). */
  delta?: boolean;
}): J {
  const clusters: J[] = [...(opts.staticClusters ?? [])];
  const b: J = {
    node: {
      id: 'gw-0.gwvendor-system',
      cluster: 'gw.gwvendor-system',
      metadata: { role: 'gwvendor-kube-gateway-api~gwvendor-system~gw' },
    },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: opts.adminPort ?? 0 } } },
    static_resources: { listeners: opts.staticListeners ?? [], clusters },
  };
  if (opts.flushInterval) b.stats_flush_interval = opts.flushInterval;
  if (opts.xdsPort !== undefined) {
    clusters.push({
      name: 'xds_cluster',
      type: 'STRICT_DNS',
      connect_timeout: '1s',
      load_assignment: {
        cluster_name: 'xds_cluster',
        endpoints: [
          {
            lb_endpoints: [
              { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: opts.xdsPort } } } },
            ],
          },
        ],
      },
      ...H2_CLUSTER,
    });
    const src = {
      ads: {},
      resource_api_version: 'V3',
      ...(opts.initialFetchTimeout ? { initial_fetch_timeout: opts.initialFetchTimeout } : {}),
    };
    b.dynamic_resources = {
      ads_config: {
        api_type: opts.delta ? 'DELTA_GRPC' : 'GRPC',
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: 'xds_cluster' } }],
      },
      cds_config: src,
      lds_config: src,
    };
  }
  return b;
}

export function edsCluster(name: string, extra: J = {}): J {
  return {
    name,
    type: 'EDS',
    connect_timeout: '1s',
    eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
    ...extra,
  };
}

export function staticCluster(name: string, hosts: Array<[string, number]>, extra: J = {}): J {
  return { name, type: 'STATIC', connect_timeout: '1s', load_assignment: cla(name, hosts), ...extra };
}

export function cla(
  name: string,
  hosts: Array<[string, number] | { address: string; port: number; health?: string; weight?: number }>,
): J {
  return {
    cluster_name: name,
    endpoints: [
      {
        lb_endpoints: hosts.map((h) => {
          const [address, port, health, weight] = Array.isArray(h)
            ? [h[0], h[1], undefined, undefined]
            : [h.address, h.port, h.health, h.weight];
          return {
            endpoint: { address: { socket_address: { address, port_value: port } } },
            ...(health ? { health_status: health } : {}),
            ...(weight ? { load_balancing_weight: weight } : {}),
          };
        }),
      },
    ],
  };
}

export interface ListenerOpts {
  rds?: string;
  routeConfig?: J;
  filters?: J[];
  hcm?: J;
  address?: string;
  accessLog?: boolean;
}

export function listener(name: string, port: number, o: ListenerOpts = {}): J {
  const hcm: J = {
    '@type': HCM_TYPE,
    stat_prefix: 'http',
    http_filters: [...(o.filters ?? []), ROUTER],
    ...(o.accessLog === false ? {} : { access_log: [STDOUT_ACCESS_LOG] }),
    ...(o.hcm ?? {}),
  };
  if (o.routeConfig) hcm.route_config = o.routeConfig;
  else hcm.rds = { route_config_name: o.rds ?? name, config_source: { ads: {}, resource_api_version: 'V3' } };
  return {
    name,
    address: { socket_address: { address: o.address ?? '127.0.0.1', port_value: port } },
    filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] }],
  };
}

export function routeConfig(name: string, vhosts: J[]): J {
  return { name, virtual_hosts: vhosts };
}

export function vhost(name: string, domains: string[], routes: J[], extra: J = {}): J {
  return { name, domains, routes, ...extra };
}

export function route(prefix: string, cluster: string, extra: J = {}): J {
  const { route: action, ...rest } = extra;
  return { match: { prefix }, route: { cluster, ...(action ?? {}) }, ...rest };
}

export interface TestProxy {
  server: ProxyServer;
  /** Application log lines (Envoy format). */
  logs: string[];
  /** Access log lines. */
  access: string[];
  adminUrl: string;
  admin(path: string, method?: string): Promise<HttpResult>;
  /** Port of a listener by name (bound port, useful with port 0). */
  port(listenerName: string): number;
  close(): Promise<void>;
}

export async function startTestProxy(
  bootstrap: J,
  opts: {
    level?: LogLevel;
    components?: Record<string, LogLevel>;
    adsBackoff?: { baseMs: number; maxMs: number };
  } = {},
): Promise<TestProxy> {
  const logs: string[] = [];
  const access: string[] = [];
  const registry = new LogRegistry({
    level: opts.level ?? 'info',
    components: opts.components,
    sink: (l) => logs.push(l),
  });
  const server = await startProxy({
    bootstrap: loadBootstrap({ configYaml: JSON.stringify(bootstrap) }),
    logs: registry,
    accessLogSinks: { stdout: (l) => access.push(l), stderr: (l) => access.push(l) },
    adsBackoff: opts.adsBackoff ?? { baseMs: 50, maxMs: 500 },
  });
  const adminUrl = `http://${server.admin!.address()}`;
  return {
    server,
    logs,
    access,
    adminUrl,
    admin: (path, method = 'GET') => httpRequest(`${adminUrl}${path}`, { method }),
    port: (name) => {
      const l = server.listeners.listening().find((x) => x.spec.name === name) ?? server.listeners.warming.get(name);
      if (!l) throw new Error(`no listener ${name}`);
      return l.socket.port;
    },
    close: () => server.stop(),
  };
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request; `host` sets the Host header as sent (any value, port included or not). */
export function httpRequest(
  url: string,
  o: {
    method?: string;
    headers?: Record<string, string>;
    host?: string;
    body?: string;
    agent?: http.Agent | false;
  } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: o.method ?? 'GET',
        headers: { ...(o.host ? { host: o.host } : {}), ...(o.headers ?? {}) },
        agent: o.agent ?? agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (o.body) req.write(o.body);
    req.end();
  });
}

/** Polls until `f` resolves truthy (events the proxy gives no callback for, e.g. a config applied). */
export async function eventually<T>(
  f: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const start = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() - start > timeoutMs)
      throw new Error(
        `timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
}

export { TYPE_URL };

/** A proxy fed by a test xDS server, with `apply()` waiting until the proxy acknowledged every type it sent. */
export interface XdsFixture {
  xds: import('./xds-server.ts').TestXdsServer;
  proxy: TestProxy;
  /** Pushes a snapshot (new version for each type given) and resolves once each type was ACKed or NACKed. */
  apply(
    snap: import('./xds-server.ts').XdsSnapshot,
  ): Promise<{ version: string; nacks: import('./xds-server.ts').RecordedRequest[] }>;
  close(): Promise<void>;
}

export async function startXdsFixture(opts: { level?: LogLevel; bootstrap?: J } = {}): Promise<XdsFixture> {
  const { startTestXdsServer } = await import('./xds-server.ts');
  const xds = await startTestXdsServer();
  let proxy: TestProxy;
  try {
    proxy = await startTestProxy(mergeFrom(bootstrapJson({ xdsPort: xds.port }), opts.bootstrap ?? {}), {
      level: opts.level ?? 'info',
    });
  } catch (err) {
    await xds.close();
    throw err;
  }
  let version = 0;
  return {
    xds,
    proxy,
    async apply(snap) {
      const v = String(++version);
      const from = xds.requests.length;
      const types: string[] = [];
      if (snap.clusters) types.push(TYPE_URL.cluster);
      if (snap.endpoints) types.push(TYPE_URL.clusterLoadAssignment);
      if (snap.listeners) types.push(TYPE_URL.listener);
      if (snap.routes) types.push(TYPE_URL.routeConfiguration);
      xds.setSnapshot(v, snap);
      const answers = await Promise.all(
        types.map((t) =>
          xds.waitFor(
            (r) =>
              r.type_url === t &&
              r.kind !== 'initial' &&
              r.kind !== 'stale' &&
              r.response_nonce !== '' &&
              (r.version_info === v || r.kind === 'nack'),
            10_000,
            from,
          ),
        ),
      );
      return { version: v, nacks: answers.filter((a) => a.kind === 'nack') };
    },
    async close() {
      await proxy.close();
      await xds.close();
    },
  };
}
