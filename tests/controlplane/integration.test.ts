// The control plane against the embedded API server (lab/embedded, hence this folder outside system/): informers
// synced under the install RBAC, the deployer's proxy objects, statuses and Events written, GatewayParameters rolls,
// informers restarted after the API server returns, its requests over kept-alive connections, and
// `system/main.ts controlplane` as a process.
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { PROJECT_CRD_COUNT, projectCrdsJson } from '../../lab/testing/crds.ts';
import { ControlPlane } from '../../system/controlplane/controlplane.ts';
import { testLogs, until } from '../../system/controlplane/testing/control-plane.ts';

const MANIFESTS = new URL('../../system/manifests/', import.meta.url).pathname;

const RESOURCES = `
apiVersion: v1
kind: Namespace
metadata: {name: sampleapp}
---
apiVersion: v1
kind: Service
metadata: {name: sampleapp, namespace: sampleapp}
spec: {ports: [{name: http, port: 8000, targetPort: 8080}], selector: {app: sampleapp}}
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayParameters
metadata: {name: debug, namespace: gwvendor-system}
spec:
  kube:
    envoyContainer:
      bootstrap:
        logLevel: debug
        componentLogLevels: {upstream: trace}
      extraArgs: [--drain-time-s, "5"]
      env: [{name: EXTRA, value: "1"}]
    deployment: {replicas: 2}
    podTemplate: {extraLabels: {team: edge}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: debug, namespace: gwvendor-system}
spec:
  gatewayClassName: gwvendor
  infrastructure:
    parametersRef: {name: debug, group: gateway.gwvendor.dev, kind: GatewayParameters}
  listeners:
    - {name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: sampleapp, namespace: sampleapp}
spec:
  parentRefs: [{name: debug, namespace: gwvendor-system}]
  hostnames: [www.example.com]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`;

let lab: TestLab;
let cp: ControlPlane;

const getJson = async (args: string[]) => JSON.parse(await lab.k([...args, '-o', 'json']));
const cond = (o: any, type: string) => (o?.status?.conditions ?? []).find((c: any) => c.type === type);

beforeAll(async () => {
  lab = await startTestLab({ labName: 'cp-integration' });
  await lab.k(['apply', '--server-side', '-f', '-'], projectCrdsJson());
  // (Polled rather than `kubectl wait --all`, which took 10-30 s against the embedded server.)
  await until('CRDs established', async () => {
    const list = await getJson(['get', 'crd']);
    return list.items.length === PROJECT_CRD_COUNT &&
      list.items.every((c: any) => cond(c, 'Established')?.status === 'True')
      ? true
      : undefined;
  });
  await lab.k(['apply', '-f', `${MANIFESTS}install/gwvendor.yaml`]);
  const token = lab.server.issueServiceAccountToken('gwvendor-system', 'gwvendor');
  const kc = new KubeConfig();
  kc.loadFromFile(lab.kubeconfigFor(token, 'gwvendor'));
  cp = new ControlPlane({
    validation: 'strict',
    logs: testLogs(),
    kubeConfig: kc,
    xdsHost: '127.0.0.1',
    xdsPort: 0,
    adminPort: 0,
    deployer: {
      proxyImage: 'gwlab.local/system:0.1.0',
      xdsHost: 'gwvendor.gwvendor-system.svc.cluster.local',
      xdsPort: 9977,
    },
    instance: 'gwvendor-test',
  });
  await cp.start();
  await lab.k(['apply', '-f', '-'], RESOURCES);
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  await lab?.stop();
});

describe('control plane with the embedded API server', () => {
  it('syncs every informer as its own ServiceAccount (the install RBAC suffices)', async () => {
    await until('synced', async () => (cp.synced() ? true : undefined));
    const krt = cp.pipeline.rt.dump();
    expect(krt.find((c) => c.name === 'HTTPRoutes')!.state.outputs['sampleapp/sampleapp']).toBeDefined();
  });

  it('deploys the proxy: ServiceAccount, ConfigMap, Deployment and LoadBalancer Service named after the Gateway', async () => {
    const dep = await until('deployment', async () => getJson(['-n', 'gwvendor-system', 'get', 'deployment', 'debug']));
    const labels = {
      'app.orch.io/name': 'debug',
      'app.orch.io/instance': 'debug',
      'gateway.networking.k8s.io/gateway-name': 'debug',
    };
    expect(dep.metadata.labels).toMatchObject(labels);
    expect(dep.spec.selector.matchLabels).toEqual(labels);
    expect(dep.spec.template.metadata.labels).toMatchObject({ ...labels, team: 'edge' });
    expect(dep.spec.replicas).toBe(2);
    const c = dep.spec.template.spec.containers[0];
    expect(c.image).toBe('gwlab.local/system:0.1.0');
    expect(c.args).toEqual([
      'proxy',
      '-c',
      '/etc/envoy/envoy.yaml',
      '--service-node',
      '$(POD_NAME).$(POD_NAMESPACE)',
      '--log-level',
      'debug',
      '--component-log-level',
      'upstream:trace',
      '--drain-time-s',
      '5',
    ]);
    expect(c.env).toEqual(expect.arrayContaining([{ name: 'EXTRA', value: '1' }]));
    expect(dep.spec.template.metadata.annotations['gateway.gwvendor.dev/bootstrap-checksum']).toMatch(/^[0-9a-f]{64}$/);
    const gw = await getJson(['-n', 'gwvendor-system', 'get', 'gateway', 'debug']);
    for (const kind of ['serviceaccount', 'configmap', 'service', 'deployment']) {
      const o = await getJson(['-n', 'gwvendor-system', 'get', kind, 'debug']);
      expect(o.metadata.ownerReferences, kind).toEqual([
        expect.objectContaining({ kind: 'Gateway', name: 'debug', uid: gw.metadata.uid, controller: true }),
      ]);
      expect(o.metadata.labels['app.orch.io/name'], kind).toBe('debug');
    }
    const svc = await getJson(['-n', 'gwvendor-system', 'get', 'service', 'debug']);
    expect(svc.spec.type).toBe('LoadBalancer');
    expect(svc.spec.ports).toEqual([expect.objectContaining({ name: 'listener-8080', port: 8080, targetPort: 8080 })]);
    const cm = await getJson(['-n', 'gwvendor-system', 'get', 'configmap', 'debug']);
    const boot = parse(cm.data['envoy.yaml']);
    expect(boot.node).toEqual({
      cluster: 'debug.gwvendor-system',
      metadata: { role: 'gwvendor-kube-gateway-api~gwvendor-system~debug' },
    });
    expect(boot.admin.address.socket_address).toEqual({ address: '127.0.0.1', port_value: 19000 });
    expect(
      boot.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address,
    ).toEqual({
      address: 'gwvendor.gwvendor-system.svc.cluster.local',
      port_value: 9977,
    });
  });

  it('writes statuses with observedGeneration: GatewayClass, Gateway (listeners, attachedRoutes), HTTPRoute parents', async () => {
    const gc = await until('GatewayClass Accepted', async () => {
      const o = await getJson(['get', 'gatewayclass', 'gwvendor']);
      return cond(o, 'Accepted')?.status === 'True' ? o : undefined;
    });
    expect(cond(gc, 'Accepted').observedGeneration).toBe(gc.metadata.generation);
    const gw = await until('Gateway Accepted', async () => {
      const o = await getJson(['-n', 'gwvendor-system', 'get', 'gateway', 'debug']);
      return cond(o, 'Accepted')?.status === 'True' && o.status.listeners?.[0]?.attachedRoutes === 1 ? o : undefined;
    });
    expect(cond(gw, 'Accepted')).toMatchObject({ reason: 'Accepted', observedGeneration: gw.metadata.generation });
    expect(cond(gw, 'Programmed')).toMatchObject({ status: 'False' });
    expect(gw.status.listeners[0]).toMatchObject({
      name: 'http',
      // An HTTP listener carries HTTPRoute and GRPCRoute (issue 12).
      supportedKinds: [
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
        { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
      ],
    });
    expect(cond(gw, 'Accepted').lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // The Service and the HTTPRoute come through separate watches: the first status written may still say
    // BackendNotFound, so wait for the one written once both are seen.
    const route = await until('HTTPRoute parents with resolved refs', async () => {
      const o = await getJson(['-n', 'sampleapp', 'get', 'httproute', 'sampleapp']);
      const resolved = (o.status?.parents?.[0]?.conditions ?? []).find((c: any) => c.type === 'ResolvedRefs');
      return resolved?.status === 'True' ? o : undefined;
    });
    expect(route.status.parents).toEqual([
      {
        parentRef: { name: 'debug', namespace: 'gwvendor-system', group: 'gateway.networking.k8s.io', kind: 'Gateway' },
        controllerName: 'gateway.gwvendor.dev/gwvendor',
        conditions: [
          expect.objectContaining({
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            observedGeneration: route.metadata.generation,
          }),
          expect.objectContaining({ type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' }),
        ],
      },
    ]);
  });

  it('Gateway addresses and Programmed follow the load balancer address; writes happen only on change', async () => {
    // The embedded cluster's LoadBalancer controller is not running here: set the address as it would.
    await lab.k([
      '-n',
      'gwvendor-system',
      'patch',
      'service',
      'debug',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"loadBalancer":{"ingress":[{"ip":"127.30.0.1"}]}}}',
    ]);
    const gw = await until('addresses', async () => {
      const o = await getJson(['-n', 'gwvendor-system', 'get', 'gateway', 'debug']);
      return o.status?.addresses?.[0]?.value === '127.30.0.1' ? o : undefined;
    });
    expect(gw.status.addresses).toEqual([{ type: 'IPAddress', value: '127.30.0.1' }]);
    expect(cond(gw, 'Programmed')).toMatchObject({ status: 'False', reason: 'Pending' });
    await cp.statusWriter!.idle();
    const writes = cp.statusWriter!.writes;
    const rv = gw.metadata.resourceVersion;
    // An unrelated change (a label on the route) recomputes the route's status to the same thing: nothing is written.
    await lab.k(['-n', 'sampleapp', 'label', 'httproute', 'sampleapp', 'touched=yes']);
    await new Promise((r) => setTimeout(r, 300));
    await cp.statusWriter!.idle();
    expect(cp.statusWriter!.writes).toBe(writes);
    expect((await getJson(['-n', 'gwvendor-system', 'get', 'gateway', 'debug'])).metadata.resourceVersion).toBe(rv);
  });

  it('records Events on the Gateway (kubectl describe / kubectl events)', async () => {
    const ev = await until('Deployed event', async () => {
      const list = await getJson([
        '-n',
        'gwvendor-system',
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=debug',
      ]);
      return list.items.find((e: any) => e.reason === 'Deployed');
    });
    expect(ev).toMatchObject({
      type: 'Normal',
      involvedObject: { kind: 'Gateway', name: 'debug' },
      source: { component: 'gwvendor' },
    });
    const described = await lab.k(['-n', 'gwvendor-system', 'describe', 'gateway', 'debug']);
    expect(described).toMatch(/Deployed/);
  });

  it('a GatewayParameters change rolls the Deployment; a missing one is reported on the Gateway', async () => {
    await lab.k([
      '-n',
      'gwvendor-system',
      'patch',
      'gatewayparameters',
      'debug',
      '--type=merge',
      '-p',
      '{"spec":{"kube":{"envoyContainer":{"bootstrap":{"logLevel":"info"}}}}}',
    ]);
    await until('log level info', async () => {
      const dep = await getJson(['-n', 'gwvendor-system', 'get', 'deployment', 'debug']);
      const args: string[] = dep.spec.template.spec.containers[0].args;
      return args[args.indexOf('--log-level') + 1] === 'info' ? true : undefined;
    });
    await lab.k([
      '-n',
      'gwvendor-system',
      'patch',
      'gateway',
      'debug',
      '--type=merge',
      '-p',
      '{"spec":{"infrastructure":{"parametersRef":{"name":"nope"}}}}',
    ]);
    const gw = await until('InvalidParameters', async () => {
      const o = await getJson(['-n', 'gwvendor-system', 'get', 'gateway', 'debug']);
      return cond(o, 'Accepted')?.reason === 'InvalidParameters' ? o : undefined;
    });
    expect(cond(gw, 'Accepted')).toMatchObject({ status: 'False', observedGeneration: gw.metadata.generation });
    expect(cond(gw, 'Accepted').message).toContain('GatewayParameters gwvendor-system/nope not found');
    // The proxy keeps running as it was.
    expect((await getJson(['-n', 'gwvendor-system', 'get', 'deployment', 'debug'])).metadata.name).toBe('debug');
  });

  it('restarts informers when the API server goes away and comes back', async () => {
    await lab.restart();
    await lab.k(['-n', 'sampleapp', 'label', 'httproute', 'sampleapp', 'after-restart=yes']);
    await until(
      'route label seen',
      async () =>
        cp.pipeline.httpRoutes.get('sampleapp/sampleapp')?.metadata.labels?.['after-restart'] === 'yes'
          ? true
          : undefined,
      60_000,
    );
  }, 90_000);

  it('writes statuses over kept-alive connections (kube/transport.ts), not a new connection per write', async () => {
    // Connections to the API server counted on undici's documented 'undici:client:connected' channel; kubectl runs
    // in processes of its own, so what is counted here is the control plane's.
    const sockets: Socket[] = [];
    const ch = diagnostics.channel('undici:client:connected');
    const onConnected = (m: unknown) => {
      const { socket, connectParams } = m as { socket: Socket; connectParams: { port: string | number } };
      if (Number(connectParams.port) === lab.server.port) sockets.push(socket);
    };
    await cp.statusWriter!.idle();
    const writes = cp.statusWriter!.writes;
    const names = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `conn-${i}`);
    ch.subscribe(onConnected);
    try {
      const routes = names.map(
        (n) =>
          `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: ${n}, namespace: sampleapp}\n` +
          `spec: {parentRefs: [{name: debug, namespace: gwvendor-system}], rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]}\n`,
      );
      await lab.k(['apply', '-f', '-'], routes.join('---\n'));
      await until('route statuses written', async () => {
        const list = await getJson(['-n', 'sampleapp', 'get', 'httproutes']);
        const done = list.items.filter((o: any) => names.includes(o.metadata.name) && o.status?.parents?.length);
        return done.length === names.length ? true : undefined;
      });
      await cp.statusWriter!.idle();
    } finally {
      ch.unsubscribe(onConnected);
    }
    const made = cp.statusWriter!.writes - writes;
    expect(made).toBeGreaterThanOrEqual(names.length);
    // client-node alone opened one connection per write.
    expect(sockets.length).toBeLessThan(made);
    await lab.k(['-n', 'sampleapp', 'delete', 'httproute', ...names]);
  });
});

describe('the controlplane command', () => {
  it('runs as `system/main.ts controlplane`, gets ready, serves the admin server on localhost and /metrics alone on --metrics-port, stops on SIGTERM', async () => {
    const { spawn } = await import('node:child_process');
    const { freePort } = await import('../../system/controlplane/testing/control-plane.ts');
    const [xds, adminPort, health, metrics] = [await freePort(), await freePort(), await freePort(), await freePort()];
    // The running control plane above owns the statuses; this one runs with its own xDS port against the same API.
    const child = spawn(
      process.execPath,
      [
        new URL('../../system/main.ts', import.meta.url).pathname,
        'controlplane',
        `--kubeconfig=${lab.server.kubeconfigPath}`,
        `--xds-port=${xds}`,
        `--admin-port=${adminPort}`,
        `--health-port=${health}`,
        `--metrics-port=${metrics}`,
        '--log-level=info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GWVENDOR_XDS_VALIDATION: 'off' } },
    );
    const out: string[] = [];
    child.stdout!.on('data', (d) => out.push(...String(d).split('\n').filter(Boolean)));
    child.stderr!.on('data', (d) => out.push(String(d)));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await until('readyz', async () => {
        const r = await fetch(`http://127.0.0.1:${health}/readyz`).catch(() => undefined);
        return r?.status === 200 ? true : undefined;
      });
      const index = await (await fetch(`http://127.0.0.1:${adminPort}/`)).text();
      expect(index).toContain('validation: <code>off</code>');
      // kgateway's controller serves Prometheus on its own port (9092 /metrics): only /metrics, none of the admin.
      const scraped = await fetch(`http://127.0.0.1:${metrics}/metrics`);
      expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await scraped.text()).toMatch(/^# TYPE \w+/m);
      for (const path of ['/', '/logging', '/snapshots/xds', '/debug/pprof/heap']) {
        expect((await fetch(`http://127.0.0.1:${metrics}${path}`, { method: 'POST' })).status, path).toBe(404);
      }
      const lines = out.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      expect(lines.find((l) => l.msg === 'starting')).toMatchObject({ component: 'controlplane', validation: 'off' });
      expect([...new Set(lines.map((l) => l.component))]).toEqual(
        expect.arrayContaining(['controlplane', 'informers', 'xds', 'admin']),
      );
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
