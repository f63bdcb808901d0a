// The proxy objects for one Gateway: names, ownership, labels, GatewayParameters settings, ports and the bootstrap.
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Gateway } from '../model.ts';
import { CHECKSUM_ANNOTATION, proxyImage, proxyObjects } from './objects.ts';

const gw: Gateway = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'edge', namespace: 'team', uid: 'u-1' },
  spec: {
    gatewayClassName: 'gwvendor',
    infrastructure: { labels: { cost: 'shared' } },
    listeners: [
      { name: 'a', port: 80, protocol: 'HTTP' },
      { name: 'b', port: 80, protocol: 'HTTP', hostname: 'b.example.com' },
      { name: 'c', port: 8443, protocol: 'HTTP' },
    ],
  },
};
const settings = {
  proxyImage: 'gwlab.local/system:0.1.0',
  xdsHost: 'gwvendor.gwvendor-system.svc.cluster.local',
  xdsPort: 9977,
};

describe('proxy objects', () => {
  it("expose a UDP listener as a UDP port (beside a TCP one of the same number) and the ListenerSets' ports", () => {
    const l4: Gateway = {
      ...gw,
      spec: {
        gatewayClassName: 'gwvendor',
        listeners: [
          { name: 'tcp', port: 5300, protocol: 'TCP' },
          { name: 'udp', port: 5300, protocol: 'UDP' },
        ],
      },
    };
    const o = proxyObjects(l4, undefined, settings, [{ port: 8080, protocol: 'HTTP' }]);
    new Service(o.service as any).validate();
    new Deployment(o.deployment as any).validate();
    expect(o.service.spec.ports).toEqual([
      { name: 'listener-5300', port: 5300, targetPort: 5300, protocol: 'TCP' },
      { name: 'udp-5300', port: 5300, targetPort: 5300, protocol: 'UDP' },
      { name: 'listener-8080', port: 8080, targetPort: 8080, protocol: 'TCP' },
    ]);
    // The ListenerSet's port is not a container port: attaching a set does not change the pod template.
    expect((o.deployment.spec.template.spec.containers[0] as any).ports.slice(0, 3)).toEqual([
      { name: 'listener-5300', containerPort: 5300, protocol: 'TCP' },
      { name: 'udp-5300', containerPort: 5300, protocol: 'UDP' },
      { name: 'readiness', containerPort: 8082, protocol: 'TCP' },
    ]);
    expect(proxyObjects(l4, undefined, settings).deployment).toEqual(o.deployment);
  });

  it('are schema-valid, named after the Gateway, owned by it, labelled, with each listener port exposed', () => {
    const o = proxyObjects(gw, undefined, settings);
    new ServiceAccount(o.serviceAccount as any).validate();
    new ConfigMap(o.configMap as any).validate();
    new Service(o.service as any).validate();
    new Deployment(o.deployment as any).validate();
    for (const x of [o.serviceAccount, o.configMap, o.service, o.deployment]) {
      expect([x.metadata.namespace, x.metadata.name]).toEqual(['team', 'edge']);
      expect(x.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'Gateway',
          name: 'edge',
          uid: 'u-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(x.metadata.labels).toMatchObject({
        'app.orch.io/name': 'edge',
        'app.orch.io/instance': 'edge',
        'gateway.networking.k8s.io/gateway-name': 'edge',
        cost: 'shared',
      });
    }
    expect(o.service.spec).toMatchObject({
      type: 'LoadBalancer',
      ports: [
        { name: 'listener-80', port: 80, targetPort: 80, protocol: 'TCP' },
        { name: 'listener-8443', port: 8443, targetPort: 8443, protocol: 'TCP' },
      ],
    });
    const c = o.deployment.spec.template.spec.containers[0];
    expect(c.args).toEqual([
      'proxy',
      '-c',
      '/etc/envoy/envoy.yaml',
      '--service-node',
      '$(POD_NAME).$(POD_NAMESPACE)',
      '--log-level',
      'info',
    ]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/ready', port: 8082 });
    expect(c.volumeMounts).toEqual([{ name: 'envoy-config', mountPath: '/etc/envoy', readOnly: true }]);
    expect(o.deployment.spec.template.spec.volumes).toEqual([{ name: 'envoy-config', configMap: { name: 'edge' } }]);
  });

  it("carry the Gateway's infrastructure labels and annotations to the proxy Pods too, its selector labels winning", () => {
    const o = proxyObjects(
      {
        ...gw,
        spec: {
          ...gw.spec,
          infrastructure: {
            labels: { cost: 'shared', 'app.orch.io/name': 'not-the-selector' },
            annotations: { 'team.example/owner': 'edge' },
          },
        },
      } as Gateway,
      undefined,
      settings,
    );
    const pod = o.deployment.spec.template.metadata;
    expect(pod.labels).toMatchObject({ cost: 'shared', 'app.orch.io/name': 'edge' });
    expect(pod.annotations).toMatchObject({ 'team.example/owner': 'edge' });
    expect(o.deployment.spec.selector.matchLabels).toEqual({
      'app.orch.io/name': 'edge',
      'app.orch.io/instance': 'edge',
      'gateway.networking.k8s.io/gateway-name': 'edge',
    });
  });

  it('apply GatewayParameters: log levels, replicas, image, extra args, env, resources, service type, pod labels', () => {
    const o = proxyObjects(
      gw,
      {
        kube: {
          deployment: { replicas: 3 },
          envoyContainer: {
            bootstrap: { logLevel: 'debug', componentLogLevels: { upstream: 'trace', connection: 'debug' } },
            image: { tag: '0.2.0', pullPolicy: 'Always' },
            extraArgs: ['--concurrency', '2'],
            env: [{ name: 'A', value: 'b' }],
            resources: { limits: { memory: '256Mi' } },
          },
          service: { type: 'ClusterIP', extraAnnotations: { x: 'y' } },
          podTemplate: { extraLabels: { team: 'edge' }, extraAnnotations: { note: 'n' } },
        },
      },
      settings,
    );
    const c = o.deployment.spec.template.spec.containers[0];
    expect(o.deployment.spec.replicas).toBe(3);
    expect(c.image).toBe('gwlab.local/system:0.2.0');
    expect(c.imagePullPolicy).toBe('Always');
    expect(c.args.slice(5)).toEqual([
      '--log-level',
      'debug',
      '--component-log-level',
      'connection:debug,upstream:trace',
      '--concurrency',
      '2',
    ]);
    expect(c.env).toContainEqual({ name: 'A', value: 'b' });
    expect(c.resources).toEqual({ limits: { memory: '256Mi' } });
    expect(o.service.spec.type).toBe('ClusterIP');
    expect(o.service.metadata.annotations).toEqual({ x: 'y' });
    expect(o.deployment.spec.template.metadata.labels.team).toBe('edge');
    expect(o.deployment.spec.template.metadata.annotations.note).toBe('n');
  });

  it('the checksum annotation follows the bootstrap, so a bootstrap change rolls the pods', () => {
    const a = proxyObjects(gw, undefined, settings).deployment.spec.template.metadata.annotations[CHECKSUM_ANNOTATION];
    const b = proxyObjects(gw, undefined, { ...settings, xdsPort: 9978 }).deployment.spec.template.metadata.annotations[
      CHECKSUM_ANNOTATION
    ];
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).not.toBe(a);
  });

  it('writes the bootstrap of the interfaces page', () => {
    const boot = parse(proxyObjects(gw, undefined, settings).configMap.data['envoy.yaml']);
    expect(boot.node).toEqual({ cluster: 'edge.team', metadata: { role: 'gwvendor-kube-gateway-api~team~edge' } });
    expect(boot.admin.address.socket_address).toEqual({ address: '127.0.0.1', port_value: 19000 });
    const xds = boot.static_resources.clusters.find((c: any) => c.name === 'xds_cluster');
    expect(xds.type).toBe('STRICT_DNS');
    expect(
      xds.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']
        .explicit_http_config,
    ).toEqual({
      http2_protocol_options: {},
    });
    expect(boot.dynamic_resources.ads_config.grpc_services).toEqual([{ envoy_grpc: { cluster_name: 'xds_cluster' } }]);
    expect(boot.dynamic_resources.lds_config).toEqual({ ads: {}, resource_api_version: 'V3' });
    expect(boot.dynamic_resources.cds_config).toEqual({ ads: {}, resource_api_version: 'V3' });
    const ready = boot.static_resources.listeners.find((l: any) => l.address.socket_address.port_value === 8082);
    expect(JSON.stringify(ready)).toContain('"path":"/ready"');
  });

  it('image overrides combine with the default', () => {
    expect(proxyImage('gwlab.local/system:0.1.0', undefined)).toBe('gwlab.local/system:0.1.0');
    expect(proxyImage('gwlab.local/system:0.1.0', { registry: 'r.io' })).toBe('r.io/system:0.1.0');
    expect(proxyImage('gwlab.local/system:0.1.0', { repository: 'proxy', tag: '1' })).toBe('gwlab.local/proxy:1');
    expect(proxyImage('gwlab.local/system:0.1.0', { digest: 'sha256:abc' })).toBe('gwlab.local/system@sha256:abc');
  });
});
