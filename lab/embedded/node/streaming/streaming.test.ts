// pods/portforward and pods/exec with real clients. Port-forward: kubectl's default (SPDY tunnelled in a WebSocket), kubectl with
// KUBECTL_PORT_FORWARD_WEBSOCKETS=false (SPDY over an HTTP upgrade), the deploy/ and svc/ forms, and
// @kubernetes/client-node's PortForward (WebSocket v4.channel.k8s.io); ten concurrent requests through each. Port-forward
// reaches a port the pod binds on 127.0.0.1 only, as Kubernetes' does (it dials localhost in the pod's netns).
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PortForward } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podLoopback } from '../../../state.ts';
import { startTestCluster, type TestCluster } from '../../testing/test-cluster.ts';
import { eventually } from '../testing/testbed.ts';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'http-app.mjs');

const MANIFEST = `
apiVersion: v1
kind: Namespace
metadata: {name: pf}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: pf}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: gwlab.test/http-app:1
        ports: [{name: http, containerPort: 8080}]
        env: [{name: LOW_ADMIN_PORT, value: "81"}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: pf}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`;

async function tenRequests(port: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      const r = await fetch(`http://127.0.0.1:${port}/req-${i}`, { headers: { connection: 'close' } });
      return ((await r.json()) as { pod: string }).pod;
    }),
  );
}

describe('streaming subresources: port-forward and exec', () => {
  let c: TestCluster;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // This cluster also runs with the lab flag that forces the LoadBalancer port fallback (tested below), and as a lab
    // that cannot bind ports below 1024 (shifted by 8000 on both sides), whatever this machine allows.
    c = await startTestCluster({
      images: { 'gwlab.test/http-app:1': ['node', APP] },
      forceLbPortFallback: true,
      lowPortShift: true,
    });
    await c.k(['apply', '-f', '-'], MANIFEST);
    await c.k(['rollout', 'status', 'deployment/web', '-n', 'pf', '--timeout=60s']);
  });

  afterAll(async () => {
    for (const ch of children) ch.kill();
    await c?.stop();
  });

  async function kubectlForward(target: string, remote: string, env: Record<string, string> = {}): Promise<number> {
    const child = spawn(
      '/usr/bin/kubectl',
      [`--kubeconfig=${c.lab.server.kubeconfigPath}`, 'port-forward', '-n', 'pf', target, `:${remote}`],
      { env: { ...process.env, KUBECONFIG: '', ...env } },
    );
    children.push(child);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const m = await eventually(() => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out), 15_000).catch((e) => {
      throw new Error(`${e}: ${out}`);
    });
    return Number(m![1]);
  }

  it('works with kubectl port-forward deploy/<name> (SPDY over WebSocket), 10 concurrent requests', async () => {
    const port = await kubectlForward('deploy/web', '8080');
    const pods = await tenRequests(port);
    expect(pods.every((p) => p.startsWith('web-'))).toBe(true);
    expect(c.node.portForwardStats).toEqual({ websocketSpdy: 1, websocketChannels: 0, spdyUpgrade: 0 });
  });

  it('works with KUBECTL_PORT_FORWARD_WEBSOCKETS=false (SPDY over HTTP upgrade) and svc/<name>', async () => {
    const port = await kubectlForward('svc/web', '80', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' });
    const pods = await tenRequests(port);
    expect(pods.every((p) => p.startsWith('web-'))).toBe(true);
    expect(c.node.portForwardStats).toEqual({ websocketSpdy: 1, websocketChannels: 0, spdyUpgrade: 1 });
  });

  it("works with @kubernetes/client-node's PortForward (WebSocket channels)", async () => {
    const kc = await c.lab.server.kubeConfig();
    const pf = new PortForward(kc);
    const pod = JSON.parse(await c.k(['get', 'pods', '-n', 'pf', '-l', 'app=web', '-o', 'json'])).items[0].metadata
      .name;
    const server = net.createServer((sock) => {
      void pf.portForward('pf', pod, [8080], sock, null, sock).catch(() => sock.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const pods = await tenRequests((server.address() as net.AddressInfo).port);
      expect(pods).toEqual(Array(10).fill(pod));
      expect(c.node.portForwardStats.websocketChannels).toBe(10);
    } finally {
      server.close();
    }
  });

  it('reaches a port bound on 127.0.0.1 only in the pod (kubectl and client-node), which the pod IP refuses', async () => {
    const pod = JSON.parse(await c.k(['get', 'pods', '-n', 'pf', '-l', 'app=web', '-o', 'json'])).items[0];
    const name = pod.metadata.name;
    await expect(fetch(`http://${pod.status.podIP}:19000/`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    const port = await kubectlForward(`pod/${name}`, '19000');
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).json()).toEqual({ admin: name });
    // Port 81 on 127.0.0.1, in a lab that shifts ports below 1024: the pod binds 8081 on its loopback, and
    // port-forward of 81 goes there.
    const lo = podLoopback(c.plan, pod.status.podIP);
    expect(await (await fetch(`http://${lo}:8081/`)).json()).toEqual({ admin: name });
    const low = await kubectlForward(`pod/${name}`, '81');
    expect(await (await fetch(`http://127.0.0.1:${low}/`)).json()).toEqual({ admin: name });
    const pf = new PortForward(await c.lab.server.kubeConfig());
    const server = net.createServer((sock) => {
      void pf.portForward('pf', name, [19000], sock, null, sock).catch(() => sock.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`);
      expect(await r.json()).toEqual({ admin: name });
    } finally {
      server.close();
    }
  });

  it('serves a LoadBalancer port it may not bind on p+8000, with the annotation and an event (forced fallback)', async () => {
    await c.k(
      ['apply', '-f', '-'],
      'apiVersion: v1\nkind: Service\nmetadata: {name: web-lb, namespace: pf}\nspec:\n  type: LoadBalancer\n  selector: {app: web}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n',
    );
    const svc = await eventually(async () => {
      const s = JSON.parse(await c.k(['get', 'svc', 'web-lb', '-n', 'pf', '-o', 'json']));
      return s.metadata.annotations?.['gwlab.dev/lb-port-80'] && s.status.loadBalancer?.ingress?.[0]?.ip
        ? s
        : undefined;
    }, 15_000);
    expect(svc.metadata.annotations['gwlab.dev/lb-port-80']).toBe('8080');
    const ip = svc.status.loadBalancer.ingress[0].ip;
    const body = (await (await fetch(`http://${ip}:8080/`)).json()) as { pod: string };
    expect(body.pod).toMatch(/^web-/);
    const events = await eventually(async () => {
      const out = await c.k([
        'get',
        'events',
        '-n',
        'pf',
        '--field-selector',
        'involvedObject.name=web-lb',
        '-o',
        'json',
      ]);
      return JSON.parse(out).items.find((e: any) => e.reason === 'LoadBalancerPortFallback');
    }, 10_000);
    expect(events.message).toContain('serving it on 8080');
  });

  describe('exec', () => {
    const exec = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          '/usr/bin/kubectl',
          [`--kubeconfig=${c.lab.server.kubeconfigPath}`, 'exec', '-n', 'pf', ...args],
          {
            env: { ...process.env, KUBECONFIG: '', ...opts.env },
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(opts.input ?? '');
      });

    for (const [form, env] of [
      ['WebSocket (v5.channel.k8s.io)', {}],
      ['SPDY (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false)', { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }],
    ] as const) {
      it(`runs commands with the pod's environment and network identity over ${form}`, async () => {
        const who = await exec(
          ['deploy/web', '--', 'node', '-e', 'console.log(require("os").hostname(), process.env.GWLAB_POD)'],
          { env },
        );
        expect(who.stderr).toBe('');
        expect(who.stdout).toMatch(/^web-\S+ pf\/web-\S+\n$/);
        const own = await exec(
          [
            'deploy/web',
            '--',
            'node',
            '-e',
            'fetch("http://localhost:19000/").then((r) => r.text()).then(console.log)',
          ],
          { env },
        );
        expect(JSON.parse(own.stdout).admin).toBe(who.stdout.split(' ')[0]);
        const piped = await exec(['-i', 'deploy/web', '--', 'cat'], { env, input: 'hello through stdin' });
        expect(piped.stdout).toBe('hello through stdin');
        const failed = await exec(['deploy/web', '--', 'sh', '-c', 'echo oops >&2; exit 3'], { env });
        expect(failed.code).toBe(3);
        expect(failed.stderr).toContain('oops');
        expect(failed.stderr).toContain('command terminated with exit code 3');
      });
    }
  });
});
