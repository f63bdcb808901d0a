// What the deployer creates for one Gateway of class gwvendor (contract sections 1 and 4.6, interfaces page):
// a ServiceAccount, a ConfigMap holding the proxy bootstrap (envoy.yaml), a Deployment and a Service, all named after
// the Gateway, in its namespace, owned by it, with GatewayParameters applied. Pure functions.
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { staticAddresses } from '../ir/static-addresses.ts';
import { type Gateway, type GatewayParametersSpec, roleOf } from '../model.ts';

export const PROXY_CONTAINER = 'gwvendor-proxy';
export const BOOTSTRAP_KEY = 'envoy.yaml';
export const BOOTSTRAP_DIR = '/etc/envoy';
export const CHECKSUM_ANNOTATION = 'gateway.gwvendor.dev/bootstrap-checksum';
export const ADMIN_PORT = 19000;
export const READINESS_PORT = 8082;
export const METRICS_PORT = 9091;

export interface DeployerSettings {
  /** The proxy image (env GWVENDOR_PROXY_IMAGE of the control plane's Deployment). */
  proxyImage: string;
  /** Where the proxies reach the control plane's xDS server. */
  xdsHost: string;
  xdsPort: number;
}

export function selectorLabels(gateway: string): Record<string, string> {
  return {
    'app.orch.io/name': gateway,
    'app.orch.io/instance': gateway,
    'gateway.networking.k8s.io/gateway-name': gateway,
  };
}

/** The proxy bootstrap of a Gateway. The node id comes from `--service-node $(POD_NAME).$(POD_NAMESPACE)`. */
export function bootstrap(
  gw: { namespace: string; name: string },
  s: Pick<DeployerSettings, 'xdsHost' | 'xdsPort'>,
): Record<string, unknown> {
  const hcm = (statPrefix: string, routes: unknown[]) => ({
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: statPrefix,
      route_config: { name: statPrefix, virtual_hosts: [{ name: statPrefix, domains: ['*'], routes }] },
      http_filters: [
        {
          name: 'envoy.filters.http.router',
          typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
        },
      ],
    },
  });
  const staticListener = (name: string, port: number, routes: unknown[]) => ({
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: port } },
    filter_chains: [{ filters: [hcm(name, routes)] }],
  });
  return {
    node: { cluster: `${gw.name}.${gw.namespace}`, metadata: { role: roleOf(gw.namespace, gw.name) } },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: ADMIN_PORT } } },
    static_resources: {
      listeners: [
        // Readiness probes hit /ready here; it is the admin's own /ready (200 LIVE once configured).
        staticListener('read_config', READINESS_PORT, [
          { match: { path: '/ready' }, route: { cluster: 'admin_port_cluster' } },
        ]),
        // Prometheus scrapes /metrics here: the admin's /stats/prometheus.
        staticListener('prometheus', METRICS_PORT, [
          {
            match: { path: '/metrics' },
            route: { cluster: 'admin_port_cluster', prefix_rewrite: '/stats/prometheus' },
          },
        ]),
      ],
      clusters: [
        {
          name: 'xds_cluster',
          type: 'STRICT_DNS',
          connect_timeout: '5s',
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
              '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
              explicit_http_config: { http2_protocol_options: {} },
            },
          },
          load_assignment: {
            cluster_name: 'xds_cluster',
            endpoints: [
              {
                lb_endpoints: [
                  { endpoint: { address: { socket_address: { address: s.xdsHost, port_value: s.xdsPort } } } },
                ],
              },
            ],
          },
        },
        {
          name: 'admin_port_cluster',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: {
            cluster_name: 'admin_port_cluster',
            endpoints: [
              {
                lb_endpoints: [
                  { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: ADMIN_PORT } } } },
                ],
              },
            ],
          },
        },
      ],
    },
    dynamic_resources: {
      ads_config: {
        api_type: 'GRPC',
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: 'xds_cluster' } }],
      },
      lds_config: { ads: {}, resource_api_version: 'V3' },
      cds_config: { ads: {}, resource_api_version: 'V3' },
    },
  };
}

export function bootstrapYaml(
  gw: { namespace: string; name: string },
  s: Pick<DeployerSettings, 'xdsHost' | 'xdsPort'>,
): string {
  return `# Proxy bootstrap of Gateway ${gw.namespace}/${gw.name}, written by the gwvendor control plane.\n${stringify(bootstrap(gw, s), { lineWidth: 0 })}`;
}

/** An image from GatewayParameters over the default `registry/repository:tag`. */
export function proxyImage(
  defaultImage: string,
  o: NonNullable<NonNullable<GatewayParametersSpec['kube']>['envoyContainer']>['image'],
): string {
  if (!o || (!o.registry && !o.repository && !o.tag && !o.digest)) return defaultImage;
  const at = defaultImage.lastIndexOf(':');
  const slash = defaultImage.lastIndexOf('/');
  const repoPart = at > slash ? defaultImage.slice(0, at) : defaultImage;
  const tag = at > slash ? defaultImage.slice(at + 1) : 'latest';
  const firstSlash = repoPart.indexOf('/');
  const registry = o.registry ?? (firstSlash > 0 ? repoPart.slice(0, firstSlash) : '');
  const repository = o.repository ?? (firstSlash > 0 ? repoPart.slice(firstSlash + 1) : repoPart);
  const base = registry ? `${registry}/${repository}` : repository;
  return o.digest ? `${base}@${o.digest}` : `${base}:${o.tag ?? tag}`;
}

export interface ProxyObjects {
  serviceAccount: Record<string, any>;
  configMap: Record<string, any>;
  deployment: Record<string, any>;
  service: Record<string, any>;
}

/**
 * The proxy's ports: one per listener port and transport (a UDP listener's port is a UDP port, named
 * `udp-<port>` (a container port name has at most 15 characters); HTTP and TCP listeners' are TCP, `listener-<port>`), by port then protocol.
 */
export function proxyPorts(listeners: { port: number; protocol: string }[]) {
  const out = new Map<string, { name: string; port: number; protocol: 'TCP' | 'UDP' }>();
  for (const l of listeners) {
    const protocol = l.protocol === 'UDP' ? ('UDP' as const) : ('TCP' as const);
    const name = protocol === 'UDP' ? `udp-${l.port}` : `listener-${l.port}`;
    out.set(name, { name, port: l.port, protocol });
  }
  return [...out.values()].sort((a, b) => a.port - b.port || (a.protocol < b.protocol ? -1 : 1));
}

/** The proxy container's command line: the bootstrap, the node id, the log levels GatewayParameters set. */
function proxyArgs(ec: NonNullable<NonNullable<GatewayParametersSpec['kube']>['envoyContainer']>): string[] {
  const logLevel = ec.bootstrap?.logLevel ?? 'info';
  const component = Object.entries(ec.bootstrap?.componentLogLevels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([c, l]) => `${c}:${l}`)
    .join(',');
  return [
    'proxy',
    '-c',
    `${BOOTSTRAP_DIR}/${BOOTSTRAP_KEY}`,
    '--service-node',
    '$(POD_NAME).$(POD_NAMESPACE)',
    '--log-level',
    logLevel,
    ...(component ? ['--component-log-level', component] : []),
    ...(ec.extraArgs ?? []),
  ];
}

export function proxyObjects(
  gw: Gateway,
  params: GatewayParametersSpec | undefined,
  s: DeployerSettings,
  /** Listeners the proxy also serves: those of the ListenerSets attached to the Gateway. */
  extraListeners: { port: number; protocol: string }[] = [],
): ProxyObjects {
  const name = gw.metadata.name;
  const namespace = gw.metadata.namespace ?? 'default';
  const labels = { ...selectorLabels(name), 'app.orch.io/managed-by': 'gwvendor' };
  const ownerReferences = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      name,
      uid: gw.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  const meta = (extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}) => ({
    name,
    namespace,
    labels: { ...labels, ...(gw.spec?.infrastructure?.labels ?? {}), ...(extra.labels ?? {}) },
    ...(gw.spec?.infrastructure?.annotations || extra.annotations
      ? { annotations: { ...(gw.spec?.infrastructure?.annotations ?? {}), ...(extra.annotations ?? {}) } }
      : {}),
    ownerReferences,
  });
  const kube = params?.kube ?? {};
  const ec = kube.envoyContainer ?? {};
  const envoyYaml = bootstrapYaml({ namespace, name }, s);
  const checksum = createHash('sha256').update(envoyYaml).digest('hex');
  const args = proxyArgs(ec);
  const ports = proxyPorts(gw.spec?.listeners ?? []);
  // A ListenerSet's ports go to the Service only: the pod template (container ports, informational) stays, so
  // attaching or detaching a set does not roll the proxies.
  const servicePorts = proxyPorts([...(gw.spec?.listeners ?? []), ...extraListeners]);
  // Gateway API's infrastructure labels and annotations reach every generated object, the proxy Pods included
  // (GEP-1867; conformance GatewayInfrastructure); the selector labels win a clash so the Deployment keeps its Pods.
  const infra = gw.spec?.infrastructure;
  const { requestedIp } = staticAddresses(gw);
  const podLabels = { ...(infra?.labels ?? {}), ...selectorLabels(name), ...(kube.podTemplate?.extraLabels ?? {}) };

  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(),
    spec: {
      replicas: kube.deployment?.replicas ?? 1,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: {
          labels: podLabels,
          annotations: {
            ...(infra?.annotations ?? {}),
            ...(kube.podTemplate?.extraAnnotations ?? {}),
            [CHECKSUM_ANNOTATION]: checksum,
          },
        },
        spec: {
          serviceAccountName: name,
          terminationGracePeriodSeconds: 10,
          ...(kube.podTemplate?.nodeSelector ? { nodeSelector: kube.podTemplate.nodeSelector } : {}),
          containers: [
            {
              name: PROXY_CONTAINER,
              image: proxyImage(s.proxyImage, ec.image),
              imagePullPolicy: ec.image?.pullPolicy ?? 'IfNotPresent',
              args,
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                ...(ec.env ?? []),
              ],
              ports: [
                ...ports.map((p) => ({ name: p.name, containerPort: p.port, protocol: p.protocol })),
                { name: 'readiness', containerPort: READINESS_PORT, protocol: 'TCP' },
                { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
              ],
              readinessProbe: {
                httpGet: { path: '/ready', port: READINESS_PORT },
                periodSeconds: 2,
                failureThreshold: 3,
              },
              ...(ec.resources ? { resources: ec.resources } : {}),
              volumeMounts: [{ name: 'envoy-config', mountPath: BOOTSTRAP_DIR, readOnly: true }],
            },
          ],
          volumes: [{ name: 'envoy-config', configMap: { name } }],
        },
      },
    },
  };
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta({ labels: kube.service?.extraLabels, annotations: kube.service?.extraAnnotations }),
    spec: {
      type: kube.service?.type ?? 'LoadBalancer',
      // A static address the Gateway asks for (ir/static-addresses.ts: one IPAddress with a value).
      ...(requestedIp ? { loadBalancerIP: requestedIp } : {}),
      selector: selectorLabels(name),
      ports: servicePorts.map((p) => ({ name: p.name, port: p.port, targetPort: p.port, protocol: p.protocol })),
    },
  };
  return {
    serviceAccount: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta() },
    configMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(), data: { [BOOTSTRAP_KEY]: envoyYaml } },
    deployment,
    service,
  };
}
