// The embedded cluster's workloads with real kubectl: Deployments become Ready pods (processes), rollouts, logs,
// describe with ImagePullBackOff, CrashLoopBackOff with --previous, LoadBalancer addresses, per-pod network identity,
// gRPC through a Service name, ConfigMaps at their mountPath and in-cluster configuration.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './cluster-testing.ts';
import { eventually } from './testbed.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, 'testdata', 'http-app.mjs');

const deployment = (name: string, extra: { env?: Record<string, string>; image?: string } = {}) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: apps}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: app
        image: ${extra.image ?? 'gwlab.test/http-app:1'}
        ports: [{name: http, containerPort: 8080}, {name: grpc, containerPort: 9000}]
        env:
        - {name: CONFIG_PATH, value: /etc/app/config.yaml}
${Object.entries(extra.env ?? {})
  .map(([k, v]) => `        - {name: ${k}, value: "${v}"}`)
  .join('\n')}
        readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 1}
        volumeMounts: [{name: config, mountPath: /etc/app}]
      volumes: [{name: config, configMap: {name: app-config}}]
---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: apps}
spec:
  type: LoadBalancer
  selector: {app: ${name}}
  ports:
  - {name: http, port: 80, targetPort: http}
  - {name: grpc, port: 9090, targetPort: grpc}
`;

const SETUP = `
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: apps}
data: {config.yaml: "greeting: hi"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: view, namespace: apps}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{kind: ServiceAccount, name: default, namespace: apps}]
`;

const pod = (name: string, image: string, restartPolicy = 'Always') => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: apps}
spec:
  restartPolicy: ${restartPolicy}
  containers: [{name: ${name}, image: ${image}}]
`;

describe('embedded cluster workloads', () => {
  let c: TestCluster;

  beforeAll(async () => {
    c = await startTestCluster({
      images: {
        'gwlab.test/http-app:1': ['node', APP],
        'gwlab.test/crash:1': ['node', '-e', 'console.log("about to crash"); process.exit(3)'],
        // Healthy for its first two /healthz requests, then 500.
        'gwlab.test/sickly:1': [
          'node',
          '-e',
          'let n = 0; require("node:http").createServer((q, r) => { r.statusCode = q.url === "/healthz" && ++n > 2 ? 500 : 200; r.end(); }).listen(8080)',
        ],
      },
    });
    await c.k(['apply', '-f', '-'], SETUP);
    await c.k(['apply', '-f', '-'], deployment('web') + '---\n' + deployment('api'));
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('brings a Deployment to Ready and rollout status succeeds', async () => {
    const out = await c.lab.kubectl(['rollout', 'status', 'deployment/web', '-n', 'apps', '--timeout=60s'], {
      timeoutMs: 70_000,
    });
    expect(out.stderr).toBe('');
    expect(out.stdout).toContain('successfully rolled out');
    const pods = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=web', '-o', 'json']));
    expect(pods.items).toHaveLength(2);
    for (const p of pods.items) {
      expect(p.status.podIP).toMatch(new RegExp(`^127\\.${c.plan.podOctet}\\.`));
      expect(p.status.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]),
      );
      expect(p.spec.nodeName).toBe(c.node.nodeName);
    }
    const yaml = await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=web', '-o', 'yaml']);
    expect(yaml).toContain('podIP: 127.');
  });

  it('serves logs of a deployment and by label, and follows them', async () => {
    expect(await c.k(['logs', 'deploy/web', '-n', 'apps'])).toContain('listening pod=web-');
    expect(await c.k(['logs', '-l', 'app=web', '-n', 'apps', '--timestamps'])).toMatch(
      /^\d{4}-\d\d-\d\dT\S+Z listening/m,
    );
    const { spawn } = await import('node:child_process');
    const follow = spawn(
      '/usr/bin/kubectl',
      [`--kubeconfig=${c.lab.server.kubeconfigPath}`, 'logs', '-f', 'deploy/web', '-n', 'apps'],
      {
        env: { ...process.env, KUBECONFIG: '' },
      },
    );
    try {
      let out = '';
      follow.stdout.on('data', (d) => (out += d));
      await eventually(() => out.includes('listening'), 15_000);
      const pods = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=web', '-o', 'json']));
      for (const p of pods.items) await fetch(`http://${p.status.podIP}:8080/followed`);
      await eventually(() => out.includes('GET /followed'), 10_000);
    } finally {
      follow.kill();
    }
  });

  it('rolls out a template change', async () => {
    await c.k(['set', 'env', 'deployment/web', '-n', 'apps', 'GREETING=v2']);
    const out = await c.lab.kubectl(['rollout', 'status', 'deployment/web', '-n', 'apps', '--timeout=60s'], {
      timeoutMs: 70_000,
    });
    expect(out.stdout).toContain('successfully rolled out');
    const pods = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=web', '-o', 'json']));
    const live = pods.items.filter((p: any) => !p.metadata.deletionTimestamp);
    expect(live).toHaveLength(2);
    for (const p of live) {
      const r = (await (await fetch(`http://${p.status.podIP}:8080/`)).json()) as any;
      expect(r.greeting).toBe('v2');
    }
    const rs = JSON.parse(await c.k(['get', 'rs', '-n', 'apps', '-l', 'app=web', '-o', 'json']));
    expect(rs.items.map((r: any) => r.spec.replicas).sort()).toEqual([0, 2]);
  });

  it('scales and restarts a rollout with kubectl scale and kubectl rollout restart', async () => {
    await c.k(['scale', 'deployment/web', '-n', 'apps', '--replicas=3']);
    await c.k(['rollout', 'status', 'deployment/web', '-n', 'apps', '--timeout=60s']);
    const live = async () =>
      JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=web', '-o', 'json'])).items.filter(
        (p: any) => !p.metadata.deletionTimestamp,
      );
    expect(await live()).toHaveLength(3);
    const before = new Set((await live()).map((p: any) => p.metadata.name));
    await c.k(['rollout', 'restart', 'deployment/web', '-n', 'apps']);
    await c.k(['rollout', 'status', 'deployment/web', '-n', 'apps', '--timeout=60s']);
    const after = await eventually(async () => {
      const l = await live();
      return l.length === 3 && l.every((p: any) => !before.has(p.metadata.name)) ? l : undefined;
    }, 20_000);
    expect(after).toHaveLength(3);
    await c.k(['scale', 'deployment/web', '-n', 'apps', '--replicas=2']);
    await c.k(['rollout', 'status', 'deployment/web', '-n', 'apps', '--timeout=60s']);
  });

  it('gives a LoadBalancer address that serves the Service port', async () => {
    const ip = await eventually(
      async () =>
        (await c.k(['get', 'svc', 'web', '-n', 'apps', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip}'])).trim(),
      15_000,
    );
    expect(ip).toMatch(new RegExp(`^127\\.${c.plan.lbOctet}\\.`));
    const body = await eventually(async () => (await (await fetch(`http://${ip}:80/`)).json()) as any, 10_000);
    expect(body.pod).toMatch(/^web-/);
  });

  it('keeps pods apart: both on 0.0.0.0:8080 and 127.0.0.1:19000, each localhost:19000 its own', async () => {
    await c.k(['rollout', 'status', 'deployment/api', '-n', 'apps', '--timeout=60s']);
    const pods = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-o', 'json'])).items.filter(
      (p: any) => !p.metadata.deletionTimestamp && p.status.podIP,
    );
    expect(pods.length).toBeGreaterThanOrEqual(4);
    for (const p of pods) {
      const r = (await (await fetch(`http://${p.status.podIP}:8080/self`)).json()) as any;
      expect(r).toEqual({ admin: p.metadata.name });
    }
  });

  it('carries gRPC from a pod to another through <svc>.<ns>.svc.cluster.local', async () => {
    const pod = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=web', '-o', 'json'])).items[0];
    const r = (await (
      await fetch(`http://${pod.status.podIP}:8080/grpc?target=api.apps.svc.cluster.local:9090`)
    ).json()) as any;
    expect(r).toEqual({ pod: expect.stringMatching(/^api-/), msg: 'hello' });
  });

  it('reads a ConfigMap at its absolute mountPath and lists pods with its service-account token', async () => {
    const pod = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=api', '-o', 'json'])).items[0];
    const cfg = (await (await fetch(`http://${pod.status.podIP}:8080/config`)).json()) as any;
    expect(cfg).toEqual({ config: 'greeting: hi' });
    const pods = (await (await fetch(`http://${pod.status.podIP}:8080/pods`)).json()) as any;
    expect(pods.server).toBe(`https://127.${c.plan.serviceOctet}.0.1:443`);
    expect(pods.pods).toContain(pod.metadata.name);
  });

  it('shows ErrImagePull/ImagePullBackOff with events for an unknown image', async () => {
    await c.k(['apply', '-f', '-'], pod('ghost', 'example.invalid/ghost:1', 'Never'));
    await eventually(
      async () => /ImagePullBackOff|ErrImagePull/.test(await c.k(['get', 'pod', 'ghost', '-n', 'apps'])),
      15_000,
    );
    const d = await eventually(async () => {
      const out = await c.k(['describe', 'pod', 'ghost', '-n', 'apps']);
      return /BackOff/.test(out) && /ImagePullBackOff/.test(out) ? out : '';
    }, 15_000);
    expect(d).toContain('Failed to pull image "example.invalid/ghost:1"');
    expect(d).toContain('Scheduled');
  });

  it('runs startup, readiness (exec) and liveness (httpGet) probes; a failing liveness probe restarts the container', async () => {
    await c.k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: sickly, namespace: apps}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: gwlab.test/sickly:1
    startupProbe: {tcpSocket: {port: 8080}, periodSeconds: 1, failureThreshold: 10}
    readinessProbe: {exec: {command: [sh, -c, 'test -n "$HOSTNAME"']}, periodSeconds: 1}
    livenessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1, failureThreshold: 1}
`,
    );
    await eventually(async () => {
      const p = JSON.parse(await c.k(['get', 'pod', 'sickly', '-n', 'apps', '-o', 'json']));
      return p.status.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True');
    }, 20_000).catch(async (err) => {
      throw new Error(`${err}\n${await c.k(['describe', 'pod', 'sickly', '-n', 'apps'])}`);
    });
    const restarted = await eventually(async () => {
      const p = JSON.parse(await c.k(['get', 'pod', 'sickly', '-n', 'apps', '-o', 'json']));
      return p.status.containerStatuses[0].restartCount >= 1 ? p : undefined;
    }, 20_000);
    expect(restarted.status.containerStatuses[0].lastState.terminated).toBeDefined();
    const d = await c.k(['describe', 'pod', 'sickly', '-n', 'apps']);
    expect(d).toContain('Liveness probe failed: HTTP probe failed with statuscode: 500');
    expect(d).toContain('failed liveness probe, will be restarted');
  });

  it('reaches CrashLoopBackOff with restarts and keeps the previous logs', async () => {
    await c.k(['apply', '-f', '-'], pod('crasher', 'gwlab.test/crash:1'));
    const crasher = await eventually(async () => {
      const p = JSON.parse(await c.k(['get', 'pod', 'crasher', '-n', 'apps', '-o', 'json']));
      const s = p.status.containerStatuses?.[0];
      return s?.state?.waiting?.reason === 'CrashLoopBackOff' && s.restartCount > 0 ? p : undefined;
    }, 20_000);
    expect(crasher.status.containerStatuses[0].lastState.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(await c.k(['get', 'pod', 'crasher', '-n', 'apps'])).toContain('CrashLoopBackOff');
    expect(await c.k(['logs', 'crasher', '-n', 'apps', '--previous'])).toBe('about to crash\n');
  });
});
