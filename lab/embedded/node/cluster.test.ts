// The embedded cluster's workloads with real kubectl: Deployments become Ready pods (processes), rollouts (revision
// and conditions), the Node and the pods' scheduling fields, logs (by container, sinceSeconds), describe with
// ImagePullBackOff, CrashLoopBackOff with --previous, events read from the events API, LoadBalancer addresses,
// per-pod network identity (a 127.0.0.1 listener is the pod's own), gRPC through a Service name, ConfigMaps at their mountPath and in-cluster configuration,
// env sources, Secret/binaryData/emptyDir volumes, exec with the pod's env and workingDir, EndpointSlices and
// Endpoints with a not-ready pod, and graceful pod deletion.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podLoopback } from '../../state.ts';
import { KubeClient, KubeError } from '../client/kube-client.ts';
import { startTestCluster, type TestCluster } from '../testing/test-cluster.ts';
import { findTaggedProcesses } from './runtime/orphans.ts';
import { eventually } from './testing/testbed.ts';

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
kind: Namespace
metadata: {name: term}
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

// Every byte value, for the Secret volume and ConfigMap binaryData (bytes >= 0x80 were once re-encoded as UTF-8).
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const b64 = (v: string | Buffer) => Buffer.from(v).toString('base64');

// One pod for the container spec: env from every source, Secret and ConfigMap (binaryData) volumes, an emptyDir
// shared by two containers, workingDir (the emptyDir), and two containers' logs.
const FACTS = `
apiVersion: v1
kind: ConfigMap
metadata: {name: facts-config, namespace: apps}
data: {greeting: hello, mode: fast}
binaryData: {bin: ${b64(ALL_BYTES)}}
---
apiVersion: v1
kind: Secret
metadata: {name: facts-secret, namespace: apps}
data: {password: ${b64('pässword')}, blob: ${b64(ALL_BYTES)}}
---
apiVersion: v1
kind: Secret
metadata: {name: facts-env, namespace: apps}
data: {user: ${b64('admin')}, token: ${b64('tök€n')}}
---
apiVersion: v1
kind: Pod
metadata: {name: facts, namespace: apps}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: gwlab.test/http-app:1
    workingDir: /shared
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
    envFrom:
    - {configMapRef: {name: facts-config}, prefix: CM_}
    - {secretRef: {name: facts-env}, prefix: SEC_}
    env:
    - {name: SPEC_VAR, value: from-spec}
    - {name: GREETING, valueFrom: {configMapKeyRef: {name: facts-config, key: greeting}}}
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: facts-secret, key: password}}}
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    volumeMounts:
    - {name: secret, mountPath: /etc/facts/secret, readOnly: true}
    - {name: config, mountPath: /etc/facts/config}
    - {name: shared, mountPath: /shared}
  - name: side
    image: gwlab.test/side:1
    volumeMounts: [{name: shared, mountPath: /shared}]
  volumes:
  - {name: secret, secret: {secretName: facts-secret}}
  - {name: config, configMap: {name: facts-config}}
  - {name: shared, emptyDir: {}}
`;

// A Service over a Ready pod and a running pod whose readiness probe always fails (both serve HTTP).
const mixedPod = (name: string, ready: boolean) => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: apps, labels: {app: mixed}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: gwlab.test/http-app:1
    ports: [{name: http, containerPort: 8080}]
    env: [{name: READY, value: "${ready ? 'yes' : 'no'}"}]
    readinessProbe: {exec: {command: [sh, -c, 'test "$READY" = yes']}, periodSeconds: 1}
`;
const MIXED = `${mixedPod('mixed-ready', true)}---${mixedPod('mixed-unready', false)}---
apiVersion: v1
kind: Service
metadata: {name: mixed, namespace: apps}
spec:
  selector: {app: mixed}
  ports: [{name: http, port: 8080, targetPort: http}]
`;

// Two pods that trap SIGTERM (writing to a hostPath folder the test reads): one exits 1 s later, one never does.
const termPod = (name: string, grace: number, exitAfterMs: number | undefined, marks: string) => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: term}
spec:
  terminationGracePeriodSeconds: ${grace}
  containers:
  - name: app
    image: gwlab.test/term:1
    env: [${exitAfterMs === undefined ? '' : `{name: EXIT_AFTER_MS, value: "${exitAfterMs}"}`}]
    volumeMounts: [{name: marks, mountPath: /marks}]
  volumes: [{name: marks, hostPath: {path: ${marks}, type: Directory}}]
`;

const pod = (name: string, image: string, restartPolicy = 'Always') => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: apps}
spec:
  restartPolicy: ${restartPolicy}
  containers: [{name: ${name}, image: ${image}}]
`;

/** Events of one object from the events API (not describe's text, where "Scheduled" also matches a condition). */
async function eventsOf(c: TestCluster, ns: string, name: string): Promise<any[]> {
  const out = await c.k(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  return JSON.parse(out).items;
}

const isReady = (p: any) => !!p?.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True');

describe('embedded cluster workloads', () => {
  let c: TestCluster;
  let marks: string;

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
        // The facts pod's second container: writes into the shared emptyDir, then logs a tick every 200 ms.
        'gwlab.test/side:1': [
          'node',
          '-e',
          'require("node:fs").writeFileSync("/shared/side.txt", "written by side"); console.log("side started"); let n = 0; setInterval(() => console.log("tick " + ++n), 200)',
        ],
        // Traps SIGTERM and records it in /marks/<pod>; exits EXIT_AFTER_MS later when set, else never.
        'gwlab.test/term:1': [
          'node',
          '-e',
          'const fs = require("node:fs"); const f = "/marks/" + require("node:os").hostname(); process.on("SIGTERM", () => { fs.appendFileSync(f, "term\\n"); const ms = process.env.EXIT_AFTER_MS; if (ms) setTimeout(() => { fs.appendFileSync(f, "exit\\n"); process.exit(0); }, Number(ms)); }); fs.appendFileSync(f, "up\\n"); setInterval(() => {}, 1000)',
        ],
      },
    });
    marks = join(c.lab.home, 'marks');
    mkdirSync(marks);
    await c.k(['apply', '-f', '-'], SETUP);
    await c.k(['apply', '-f', '-'], deployment('web') + '---\n' + deployment('api'));
    // Started now so that they are up when their tests come; they do not disturb the tests before them.
    await c.k(
      ['apply', '-f', '-'],
      [FACTS, MIXED, termPod('graceful', 10, 1000, marks), termPod('stubborn', 2, undefined, marks)].join('---\n'),
    );
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
    // The one Node is Ready, and every pod's hostIP is its InternalIP.
    expect(await c.k(['get', 'node'])).toMatch(new RegExp(`^${c.node.nodeName}\\s+Ready\\s`, 'm'));
    const node = JSON.parse(await c.k(['get', 'node', c.node.nodeName, '-o', 'json']));
    expect(node.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'True', reason: 'KubeletReady' }),
    );
    const internalIP = node.status.addresses.find((a: any) => a.type === 'InternalIP')?.address;
    expect(internalIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    for (const p of pods.items) {
      expect(p.status.hostIP).toBe(internalIP);
      expect(p.status.hostIPs).toEqual([{ ip: internalIP }]);
    }
    // The first rollout is revision 1, Available and Progressing as `kubectl rollout status` reads them.
    const d = await eventually(
      async () => {
        const o = JSON.parse(await c.k(['get', 'deployment', 'web', '-n', 'apps', '-o', 'json']));
        return o.status.conditions?.some((x: any) => x.reason === 'NewReplicaSetAvailable') ? o : undefined;
      },
      10_000,
      200,
    );
    expect(d.metadata.annotations['deployment.kubernetes.io/revision']).toBe('1');
    expect(d.status.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }),
        expect.objectContaining({ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }),
      ]),
    );
  });

  it('serves logs of a deployment and by label, and follows them', async () => {
    expect(await c.k(['logs', 'deploy/web', '-n', 'apps'])).toContain('listening pod=web-');
    // With a selector kubectl shows the last 10 lines of each pod by default, and the readiness probes' lines push
    // the first one out after a few seconds (more on a busy machine): --tail=-1 asks for them all.
    expect(await c.k(['logs', '-l', 'app=web', '-n', 'apps', '--timestamps', '--tail=-1'])).toMatch(
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
    // The revision annotation moves to 2 with the new ReplicaSet; the old one keeps 1.
    const revisions = Object.fromEntries(
      rs.items.map((r: any) => [r.spec.replicas, r.metadata.annotations['deployment.kubernetes.io/revision']]),
    );
    expect(revisions).toEqual({ 0: '1', 2: '2' });
    const d = await eventually(
      async () => {
        const o = JSON.parse(await c.k(['get', 'deployment', 'web', '-n', 'apps', '-o', 'json']));
        const newRS = rs.items.find((r: any) => r.spec.replicas === 2).metadata.name;
        const p = o.status.conditions?.find((x: any) => x.type === 'Progressing');
        return p?.reason === 'NewReplicaSetAvailable' && p.message.includes(newRS) ? o : undefined;
      },
      10_000,
      200,
    );
    expect(d.metadata.annotations['deployment.kubernetes.io/revision']).toBe('2');
    expect(d.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }),
    );
    expect(d.status).toMatchObject({ replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
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
    // Only the two Deployments' pods: other pods of the namespace start at their own pace.
    const pods = JSON.parse(
      await c.k(['get', 'pods', '-n', 'apps', '-l', 'app in (web,api)', '-o', 'json']),
    ).items.filter((p: any) => !p.metadata.deletionTimestamp && p.status.podIP);
    expect(pods.length).toBeGreaterThanOrEqual(4);
    for (const p of pods) {
      const r = (await (await fetch(`http://${p.status.podIP}:8080/self`)).json()) as any;
      expect(r).toEqual({ admin: p.metadata.name });
    }
  });

  it("keeps a pod's 127.0.0.1 listener to itself: another pod is refused on its pod IP and on its loopback", async () => {
    // As in Kubernetes, where 127.0.0.1 is the pod's own lo (network namespace): 19000 is http-app's admin on
    // 127.0.0.1, 8080 its app on 0.0.0.0.
    const [a, b] = JSON.parse(
      await c.k(['get', 'pods', '-n', 'apps', '-l', 'app in (web,api)', '-o', 'json']),
    ).items.filter((p: any) => !p.metadata.deletionTimestamp && isReady(p));
    const from = async (p: any, url: string) =>
      (await fetch(`http://${p.status.podIP}:8080/get?url=${encodeURIComponent(url)}`)).json();
    const bIP = b.status.podIP;
    expect(await from(a, `http://${bIP}:19000/`)).toEqual({ code: 'ECONNREFUSED' });
    expect(await from(a, `http://${podLoopback(c.plan, bIP)}:19000/`)).toEqual({ code: 'ECONNREFUSED' });
    expect(await from(a, `http://${bIP}:8080/`)).toMatchObject({ pod: b.metadata.name, peer: a.status.podIP });
    expect(await from(b, 'http://127.0.0.1:19000/')).toEqual({ admin: b.metadata.name });
    expect(await from(b, 'http://127.0.0.1:8080/')).toMatchObject({ pod: b.metadata.name });
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

  describe('one pod with two containers (facts)', () => {
    let facts: any;
    const get = async (path: string) => (await fetch(`http://${facts.status.podIP}:8080${path}`)).json() as any;

    beforeAll(async () => {
      facts = await eventually(
        async () => {
          const p = JSON.parse(await c.k(['get', 'pod', 'facts', '-n', 'apps', '-o', 'json']));
          return isReady(p) ? p : undefined;
        },
        30_000,
        200,
      ).catch(async (err) => {
        throw new Error(`${err}\n${await c.k(['describe', 'pod', 'facts', '-n', 'apps'])}`);
      });
    });

    it('gives env from configMapKeyRef, secretKeyRef, envFrom (with prefix) and fieldRef podIP/nodeName', async () => {
      const env = await get('/env');
      expect(env).toMatchObject({
        SPEC_VAR: 'from-spec',
        GREETING: 'hello',
        PASSWORD: 'pässword',
        CM_greeting: 'hello',
        CM_mode: 'fast',
        SEC_user: 'admin',
        SEC_token: 'tök€n',
        POD_IP: facts.status.podIP,
        NODE_NAME: c.node.nodeName,
      });
      expect(facts.spec.nodeName).toBe(c.node.nodeName);
      // envFrom takes a ConfigMap's data only, as the kubelet does: binaryData is no variable.
      expect(env).not.toHaveProperty('CM_bin');
    });

    it('mounts Secret and ConfigMap binaryData byte for byte, and shares an emptyDir between containers', async () => {
      const bytes = async (path: string) =>
        Buffer.from((await get(`/file?path=${encodeURIComponent(path)}`)).base64, 'base64');
      expect((await bytes('/etc/facts/secret/password')).toString('hex')).toBe(Buffer.from('pässword').toString('hex'));
      expect((await bytes('/etc/facts/secret/blob')).equals(ALL_BYTES)).toBe(true);
      expect((await bytes('/etc/facts/config/bin')).equals(ALL_BYTES)).toBe(true);
      expect((await bytes('/etc/facts/config/greeting')).toString()).toBe('hello');
      // Written by the side container at /shared, read by main at its own mount of the same volume.
      expect((await bytes('/shared/side.txt')).toString()).toBe('written by side');
    });

    it('runs kubectl exec with the pod spec env and the container workingDir', async () => {
      const out = await c.k([
        'exec',
        'facts',
        '-n',
        'apps',
        '-c',
        'main',
        '--',
        'sh',
        '-c',
        'echo "$SPEC_VAR $PASSWORD $POD_IP"; pwd; cat side.txt',
      ]);
      const [vars, pwd, side] = out.split('\n');
      expect(vars).toBe(`from-spec pässword ${facts.status.podIP}`);
      // workingDir is /shared (the emptyDir): the same folder as the container's, where side.txt is.
      expect(pwd).toBe((await get('/cwd')).cwd);
      expect(side).toBe('written by side');
    });

    it('serves pods/log per container, and sinceSeconds', async () => {
      expect(await c.k(['logs', 'facts', '-n', 'apps', '-c', 'main'])).toMatch(/^listening pod=facts /);
      // Wait until "side started" is well over a second old, with ticks after it.
      const full = await eventually(
        async () => {
          const out = await c.k(['logs', 'facts', '-n', 'apps', '-c', 'side', '--timestamps']);
          const first = /^(\S+) side started$/m.exec(out);
          return first && Date.now() - Date.parse(first[1]) > 2000 ? out : '';
        },
        15_000,
        200,
      );
      expect(full).not.toContain('listening');
      const asked = Date.now();
      const recent = await c.k(['logs', 'facts', '-n', 'apps', '-c', 'side', '--since=1s', '--timestamps']);
      const lines = recent.trimEnd().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.length).toBeLessThan(full.trimEnd().split('\n').length);
      for (const l of lines) {
        expect(l).toMatch(/^\S+ tick \d+$/);
        // Nothing older than 1 s before the request (the server's clock is this machine's).
        expect(Date.parse(l.split(' ')[0])).toBeGreaterThanOrEqual(asked - 1000);
      }
      // Without `container` the API names the choices, as kubectl's error does.
      const raw = await c.lab.kubectl(['get', '--raw', '/api/v1/namespaces/apps/pods/facts/log']);
      expect(raw.code).not.toBe(0);
      expect(raw.stderr).toContain('a container name must be specified for pod facts, choose one of: [main side]');
    });

    it('records Scheduled, Pulled, Created and Started events for the pod', async () => {
      const events = (await eventually(
        async () => {
          const e = await eventsOf(c, 'apps', 'facts');
          return e.filter((x) => x.reason === 'Started').length === 2 ? e : undefined;
        },
        10_000,
        200,
      ))!;
      expect(events).toContainEqual(
        expect.objectContaining({
          type: 'Normal',
          reason: 'Scheduled',
          message: `Successfully assigned apps/facts to ${c.node.nodeName}`,
          source: expect.objectContaining({ component: 'default-scheduler' }),
        }),
      );
      for (const [container, image] of [
        ['main', 'gwlab.test/http-app:1'],
        ['side', 'gwlab.test/side:1'],
      ]) {
        const of = (reason: string) =>
          events.filter((e) => e.reason === reason && e.involvedObject.fieldPath === `spec.containers{${container}}`);
        expect(of('Pulled').map((e) => e.message)).toEqual([`Container image "${image}" already present on machine`]);
        expect(of('Created').map((e) => e.message)).toEqual([`Created container ${container}`]);
        expect(of('Started').map((e) => e.message)).toEqual([`Started container ${container}`]);
        expect(of('Pulled')[0].source).toMatchObject({ component: 'kubelet', host: c.node.nodeName });
      }
    });
  });

  it('lists a not-ready pod as not ready in the EndpointSlice and Endpoints; ClusterIP traffic avoids it', async () => {
    const { ready, unready } = (await eventually(
      async () => {
        const items = JSON.parse(await c.k(['get', 'pods', '-n', 'apps', '-l', 'app=mixed', '-o', 'json'])).items;
        const r = items.find((p: any) => p.metadata.name === 'mixed-ready');
        const u = items.find((p: any) => p.metadata.name === 'mixed-unready');
        return isReady(r) && u?.status?.containerStatuses?.[0]?.state?.running ? { ready: r, unready: u } : undefined;
      },
      30_000,
      200,
    ))!;
    expect(isReady(unready)).toBe(false);
    const slice = await eventually(
      async () => {
        const items = JSON.parse(
          await c.k(['get', 'endpointslices', '-n', 'apps', '-l', 'kubernetes.io/service-name=mixed', '-o', 'json']),
        ).items;
        return items.length === 1 && items[0].endpoints?.some((e: any) => e.conditions.ready) ? items[0] : undefined;
      },
      10_000,
      200,
    );
    const endpoint = (p: any, ok: boolean) =>
      expect.objectContaining({
        addresses: [p.status.podIP],
        conditions: { ready: ok, serving: ok, terminating: false },
        nodeName: c.node.nodeName,
        targetRef: expect.objectContaining({ kind: 'Pod', name: p.metadata.name, uid: p.metadata.uid }),
      });
    expect(slice.endpoints).toHaveLength(2);
    expect(slice.endpoints).toEqual(expect.arrayContaining([endpoint(ready, true), endpoint(unready, false)]));
    expect(slice.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const ep = JSON.parse(await c.k(['get', 'endpoints', 'mixed', '-n', 'apps', '-o', 'json']));
    expect(ep.subsets).toEqual([
      {
        addresses: [expect.objectContaining({ ip: ready.status.podIP })],
        notReadyAddresses: [expect.objectContaining({ ip: unready.status.podIP })],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
    // The not-ready pod does serve, so a connection relayed to it would show in the answers.
    expect(((await (await fetch(`http://${unready.status.podIP}:8080/`)).json()) as any).pod).toBe('mixed-unready');
    const clusterIP = JSON.parse(await c.k(['get', 'svc', 'mixed', '-n', 'apps', '-o', 'json'])).spec.clusterIP;
    const answers: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`http://${clusterIP}:8080/`, { headers: { connection: 'close' } });
      answers.push(((await r.json()) as any).pod);
    }
    expect(answers).toEqual(Array(10).fill('mixed-ready'));
  });

  it('keeps a deleted pod Terminating until its process is gone: SIGTERM, SIGKILL after the grace period', async () => {
    const mark = (name: string) => {
      try {
        return readFileSync(join(marks, name), 'utf8');
      } catch {
        return '';
      }
    };
    await eventually(() => mark('graceful').includes('up') && mark('stubborn').includes('up'), 30_000);
    const run = c.node.runner.runId;
    const alive = (name: string) => findTaggedProcesses({ run, pod: `term/${name}` }).length > 0;
    expect([alive('graceful'), alive('stubborn')]).toEqual([true, true]);
    const client = new KubeClient(await c.lab.server.kubeConfig());
    type Seen = { grace?: number; lastAlive: number; goneAt?: number; aliveWhenGone?: boolean };
    const seen: Record<string, Seen> = { graceful: { lastAlive: 0 }, stubborn: { lastAlive: 0 } };
    const t0 = Date.now();
    try {
      await c.k(['delete', 'pod', 'graceful', 'stubborn', '-n', 'term', '--wait=false']);
      while (Object.values(seen).some((x) => x.goneAt === undefined) && Date.now() - t0 < 20_000) {
        for (const [name, x] of Object.entries(seen)) {
          if (x.goneAt !== undefined) continue;
          if (alive(name)) x.lastAlive = Date.now() - t0;
          try {
            const p = await client.request('GET', `/api/v1/namespaces/term/pods/${name}`);
            expect(p.metadata.deletionTimestamp).toBeTruthy();
            x.grace ??= p.metadata.deletionGracePeriodSeconds;
          } catch (err) {
            if (!(err instanceof KubeError && err.code === 404)) throw err;
            x.goneAt = Date.now() - t0;
            x.aliveWhenGone = alive(name);
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await client.close();
    }
    // graceful: SIGTERM, exits 1 s later by itself; the object goes then, long before its 10 s grace period.
    expect(seen.graceful).toMatchObject({ grace: 10, aliveWhenGone: false });
    expect(seen.graceful.goneAt).toBeGreaterThanOrEqual(1000);
    expect(seen.graceful.goneAt).toBeLessThan(6000);
    expect(seen.graceful.lastAlive).toBeGreaterThanOrEqual(500);
    expect(mark('graceful')).toBe('up\nterm\nexit\n');
    // stubborn: ignores SIGTERM, so it runs through its 2 s grace period and is then SIGKILLed (no "exit").
    expect(seen.stubborn).toMatchObject({ grace: 2, aliveWhenGone: false });
    expect(seen.stubborn.goneAt).toBeGreaterThanOrEqual(2000);
    expect(seen.stubborn.goneAt).toBeLessThan(7000);
    expect(seen.stubborn.lastAlive).toBeGreaterThanOrEqual(1000);
    expect(mark('stubborn')).toBe('up\nterm\n');
    for (const name of ['graceful', 'stubborn']) {
      expect(await eventsOf(c, 'term', name)).toContainEqual(
        expect.objectContaining({ reason: 'Killing', message: 'Stopping container app' }),
      );
    }
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
    const events = await eventsOf(c, 'apps', 'ghost');
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          reason: 'Scheduled',
          source: expect.objectContaining({ component: 'default-scheduler' }),
        }),
        expect.objectContaining({ type: 'Warning', reason: 'Failed', message: 'Error: ErrImagePull' }),
        expect.objectContaining({ reason: 'BackOff', message: 'Back-off pulling image "example.invalid/ghost:1"' }),
      ]),
    );
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
    // Killed for its liveness probe: SIGTERM (15), exit code 128 + 15, as the kubelet reports it.
    expect(restarted.status.containerStatuses[0].lastState.terminated).toMatchObject({ exitCode: 143, signal: 15 });
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
    // The pod alternates between the back-off and a short run after it (as in Kubernetes), and a busy machine may
    // be seconds between two reads: kubectl's table shows the back-off while the pod waits in it.
    const table = await eventually(async () => {
      const t = await c.k(['get', 'pod', 'crasher', '-n', 'apps']);
      return t.includes('CrashLoopBackOff') ? t : undefined;
    }, 20_000);
    expect(table).toMatch(/crasher\s+0\/1\s+CrashLoopBackOff\s+\d+/);
    expect(await c.k(['logs', 'crasher', '-n', 'apps', '--previous'])).toBe('about to crash\n');
    expect(await eventsOf(c, 'apps', 'crasher')).toContainEqual(
      expect.objectContaining({
        type: 'Warning',
        reason: 'BackOff',
        message: expect.stringMatching(/^Back-off restarting failed container crasher in pod crasher_apps/),
      }),
    );
  });
});
