// Tried as a new user would: `git clone` into a temporary folder, the README's first command (`npm ci && npm run
// lab:up`) verbatim, then every cluster operation of the contract's section 4.3 with /usr/bin/kubectl, and lab:down
// leaving no process behind. The lab state goes to a temporary GWLAB_HOME, as on a fresh machine.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { holdContractPorts } from './support/host-ports.ts';
import { KUBECTL } from './support/lab.ts';
import { scratchRoot } from './support/scratch.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const GW = 'new-user-gw';
/** The contract's "sample gateway": a listener on port 80, reached through the Service port 80 (or a port-forward). */
const SAMPLE_GW = 'new-user-sample';

/** The README's two commands: the first fenced block's first two lines, comments removed. */
function readmeCommands(readme: string): { labUp: string; test: string } {
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const [labUp, test] = block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
  return { labUp, test };
}

/** Command lines of live processes that mention a path (their script or working files live under it). */
function processesMentioning(path: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(path)) out.push(`${pid} ${cmd}`);
    } catch {}
  }
  return out;
}

function sh(
  cmd: string,
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', cmd],
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          // A command still running at the bound is killed: say so after its output (a failure shows the tail).
          out: `${stdout}\n${stderr}${err?.killed ? `\n[killed: still running after ${opts.timeoutMs / 1000} s]` : ''}`,
        }),
    );
  });
}

describe('a new user, from git clone to the contract section 4.3', () => {
  // In memory when the machine allows (support/scratch.ts): the clone's npm ci writes 1.2 GB.
  const tmp = mkdtempSync(join(scratchRoot(), 'gwlab-new-user-'));
  const clone = join(tmp, 'gwlab');
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries({ ...process.env, GWLAB_HOME: join(tmp, 'home'), FORCE_COLOR: '0' }).filter(
      // A new user's shell: no vitest or npm-script variables, none that npm test sets for its processes (the compile
      // cache), and the machine's own PATH (no node_modules/.bin).
      ([k]) =>
        !k.startsWith('VITEST') &&
        !k.startsWith('npm_') &&
        !['NODE_OPTIONS', 'KUBECONFIG', 'NODE_COMPILE_CACHE'].includes(k),
    ),
  );
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((p) => !p.includes('node_modules'))
    .join(':');
  const forwards = new Set<ChildProcess>();
  let kubeconfig = '';
  let labUpOutput = '';

  const kubectl = (args: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const c = execFile(
        KUBECTL,
        args,
        { env: { ...env, KUBECONFIG: kubeconfig }, timeout: 60_000, maxBuffer: 64 << 20 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
      if (input !== undefined) c.stdin!.end(input);
    });

  /** Held from the first forward to the end: the contract's local ports are one per machine (host-ports.ts). */
  let releasePorts: (() => Promise<void>) | undefined;

  /** `kubectl port-forward` as the contract has it; resolves once kubectl prints its Forwarding line. */
  async function portForward(args: string[]): Promise<ChildProcess> {
    releasePorts ??= await holdContractPorts();
    const child = spawn(KUBECTL, ['port-forward', ...args], {
      env: { ...env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    forwards.add(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await waitFor(
      `kubectl port-forward ${args.join(' ')}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${out}`);
        return { ok: out.includes('Forwarding from 127.0.0.1'), seen: out };
      },
      { timeoutMs: 20_000 },
    );
    return child;
  }

  beforeAll(async () => {
    const c = await sh(`git clone -q ${JSON.stringify(ROOT)} ${JSON.stringify(clone)}`, {
      cwd: tmp,
      env,
      timeoutMs: 60_000,
    });
    expect(c.code, c.out).toBe(0);
  }, 70_000);

  afterAll(async () => {
    for (const f of forwards) f.kill('SIGKILL');
    await releasePorts?.();
    await sh('npm run -s lab:down', { cwd: clone, env, timeoutMs: 60_000 });
    rmSync(tmp, { recursive: true, force: true });
  }, 90_000);

  it("runs the README's first command verbatim and gets a Ready lab", async () => {
    const { labUp, test } = readmeCommands(readFileSync(join(clone, 'README.md'), 'utf8'));
    expect(labUp).toBe('npm ci && npm run lab:up');
    expect(test).toBe('npm test');
    // A bound, not a speed check: ~35 s alone (npm ci ~28 s of it), 3-4 minutes inside the whole suite on a shared
    // 2-core machine (load 15-22), where 240 s was once not enough for npm ci to finish.
    const r = await sh(labUp, { cwd: clone, env, timeoutMs: 480_000 });
    expect(r.code, r.out.slice(-3000)).toBe(0);
    const m = /export KUBECONFIG=(\S+)/.exec(r.out);
    expect(m, r.out.slice(-2000)).toBeTruthy();
    kubeconfig = m![1];
    labUpOutput = r.out;
    expect(r.out).toContain('kubectl -n gwvendor-system port-forward deploy/gwvendor 9095');
  }, 490_000);

  it('applies the resources of section 2 and the sample application (4.5)', async () => {
    await kubectl(['apply', '-f', join(clone, 'system/manifests/sampleapp.yaml')]);
    await kubectl(
      ['apply', '-f', '-'],
      `apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayParameters
metadata: {name: ${GW}, namespace: gwvendor-system}
spec: {kube: {envoyContainer: {bootstrap: {logLevel: debug}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${GW}, namespace: gwvendor-system}
spec:
  gatewayClassName: gwvendor
  infrastructure: {parametersRef: {name: ${GW}, group: gateway.gwvendor.dev, kind: GatewayParameters}}
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${SAMPLE_GW}, namespace: gwvendor-system}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: new-user-route, namespace: sampleapp}
spec:
  parentRefs: [{name: ${GW}, namespace: gwvendor-system}, {name: ${SAMPLE_GW}, namespace: gwvendor-system}]
  hostnames: [www.example.com]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`,
    );
    await kubectl(['-n', 'sampleapp', 'rollout', 'status', 'deploy/sampleapp', '--timeout=90s']);
    await kubectl(['-n', 'gwvendor-system', 'wait', `gateway/${GW}`, '--for=condition=Programmed', '--timeout=90s']);
    await kubectl(['-n', 'gwvendor-system', 'rollout', 'status', `deploy/${GW}`, '--timeout=90s']);
    await kubectl([
      '-n',
      'gwvendor-system',
      'wait',
      `gateway/${SAMPLE_GW}`,
      '--for=condition=Programmed',
      '--timeout=90s',
    ]);
  }, 200_000);

  it('forwards the control plane port 9095 (deployment gwvendor, namespace gwvendor-system)', async () => {
    const pf = await portForward(['-n', 'gwvendor-system', 'deploy/gwvendor', '9095']);
    const index = await (await fetch('http://localhost:9095/')).text();
    for (const p of ['/debug/pprof', '/logging', '/snapshots/krt', '/snapshots/xds']) expect(index).toContain(p);
    pf.kill();
  });

  it('forwards the gateway proxy admin port 19000 and the traffic port 8080', async () => {
    const admin = await portForward(['-n', 'gwvendor-system', `deploy/${GW}`, '19000']);
    const dump = await (await fetch('http://localhost:19000/config_dump')).json();
    expect(JSON.stringify(dump)).toContain('www.example.com');
    const traffic = await portForward(['-n', 'gwvendor-system', `deploy/${GW}`, '8080:8080']);
    const res = await expectHttpEventually(
      { url: 'http://localhost:8080', path: '/headers', host: 'www.example.com' },
      { status: 200 },
    );
    expect(res.json.headers.Host).toEqual(['www.example.com']);
    expect(res.headers.server).toBe('envoy');
    admin.kill();
    traffic.kill();
  });

  it('forwards local 8080 to the sample gateway port 80, and runs the curl example lab:up printed', async () => {
    const traffic = await portForward(['-n', 'gwvendor-system', `deploy/${SAMPLE_GW}`, '8080:80']);
    await expectHttpEventually(
      { url: 'http://localhost:8080', path: '/headers', host: 'www.example.com' },
      { status: 200 },
    );
    traffic.kill();
    // The printed lines, with the Gateway's name filled in, in the user's shell.
    const lines = labUpOutput
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^(IP|PORT)=\$\(kubectl |^curl /.test(l))
      .map((l) => l.replaceAll('<gateway_name>', SAMPLE_GW));
    expect(lines.map((l) => l.split(/[=\s]/)[0])).toEqual(['IP', 'PORT', 'curl']);
    const r = await waitFor(
      'the printed curl example to answer 200',
      async () => {
        const x = await sh(`set -e; ${lines.join('\n')}`, {
          cwd: tmp,
          env: { ...env, KUBECONFIG: kubeconfig },
          timeoutMs: 20_000,
        });
        return { ok: x.code === 0 && x.out.includes('"headers"'), value: x, seen: x.out.slice(-500) };
      },
      { timeoutMs: 30_000 },
    );
    // stdout is the JSON body (curl's progress meter goes to stderr).
    expect(r.out).toMatch(/"Host":\s*\[\s*"www\.example\.com(:\d+)?"\s*\]/);
  });

  it('lists pods, reads routes, logs, gateway pod settings and the gateway address', async () => {
    expect(await kubectl(['get', 'pods', '-n', 'gwvendor-system'])).toMatch(/gwvendor-\S+\s+1\/1\s+Running/);
    expect(await kubectl(['get', 'httproutes', '-A'])).toContain('new-user-route');
    const route = await kubectl(['get', 'httproute', 'new-user-route', '-n', 'sampleapp', '-o', 'yaml']);
    expect(route).toMatch(/status: "True"\n\s+type: Accepted/);
    expect(await kubectl(['logs', 'deploy/gwvendor', '-n', 'gwvendor-system'])).toMatch(/"component":/);
    expect(await kubectl(['logs', `deploy/${GW}`, '-n', 'gwvendor-system'])).toMatch(/\]\[debug\]\[/);
    expect(await kubectl(['logs', '-l', `app.orch.io/name=${GW}`, '-n', 'gwvendor-system'])).toMatch(/\]\[debug\]\[/);
    const pods = await kubectl(['get', 'pods', '-l', `app.orch.io/name=${GW}`, '-n', 'gwvendor-system', '-o', 'yaml']);
    expect(pods).toMatch(/- --log-level\n\s+- debug/);
    const ingress = await waitFor(
      `Service ${GW} load balancer address`,
      async () => {
        const v = await kubectl([
          'get',
          'service',
          GW,
          '-n',
          'gwvendor-system',
          '-o',
          'jsonpath={.status.loadBalancer.ingress[0]}',
        ]);
        return { ok: v.includes('"ip"') || v.includes('"hostname"'), value: v, seen: v };
      },
      { timeoutMs: 30_000 },
    );
    expect(JSON.parse(ingress).ip).toMatch(/^127\./);
  });

  it('lab:down stops everything and leaves no process behind', async () => {
    for (const f of forwards) f.kill('SIGKILL');
    const r = await sh('npm run -s lab:down', { cwd: clone, env, timeoutMs: 60_000 });
    expect(r.code, r.out).toBe(0);
    expect(processesMentioning(clone)).toEqual([]);
  }, 70_000);
});
