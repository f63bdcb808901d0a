// The lab's own commands against the running scenario lab: lab:pf (each target), lab:up run a second time, and
// lab:reload rolling the system's pods. Only on a lab started by lab:up (the embedded default), not on an external one.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { uniqueName, useLab } from './support/lab.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const lab = useLab();
const children = new Set<ChildProcess>();

function script(name: string, args: string[]): ChildProcess & { out: () => string } {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'scripts', name), '--name', lab.name, '--home', lab.home, ...args],
    {
      cwd: ROOT,
      env: { ...process.env, GWLAB_HOME: lab.home, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  child.on('exit', () => children.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return Object.assign(child, { out: () => out });
}

function exitCode(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code ?? 1));
  });
}

/** Starts lab:pf on a free local port and returns its URL once it prints its Forwarding line. */
async function labPf(args: string[]): Promise<{ url: string; child: ChildProcess & { out: () => string } }> {
  const child = script('lab-pf.ts', [...args, '--port', '0']);
  const url = await waitFor(
    `lab:pf ${args.join(' ')} to print its Forwarding line`,
    async () => {
      const m = /Forwarding from (127\.0\.0\.1:\d+)/.exec(child.out());
      if (m) return { ok: true, value: `http://${m[1]}` };
      if (child.exitCode !== null) throw new Error(`lab:pf exited ${child.exitCode}: ${child.out()}`);
      return { ok: false };
    },
    { timeoutMs: 20_000 },
  );
  return { url, child };
}

describe.skipIf(lab.backend !== 'embedded')('lab commands', () => {
  const ns = uniqueName('labcmd');
  const gw = 'pf-gw';

  beforeAll(async () => {
    await lab.kube.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gw}, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 8080}]
`);
    await lab.kube.waitForCondition('gateway.networking.k8s.io/v1', 'Gateway', gw, ns, 'Programmed', {
      timeoutMs: 60_000,
    });
  }, 90_000);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('lab:pf controlplane forwards the admin server and stops cleanly on SIGINT', async () => {
    const { url, child } = await labPf(['controlplane']);
    const index = await (await fetch(`${url}/`)).text();
    expect(index).toContain('/snapshots/xds');
    child.kill('SIGINT');
    expect(await exitCode(child)).toBe(0);
  });

  it('lab:pf proxy <gateway> forwards the proxy admin; lab:pf gateway <gateway> the traffic port', async () => {
    const proxy = await labPf(['proxy', gw]);
    expect(proxy.child.out()).toContain(`proxy admin of ${ns}/${gw}`);
    expect(await (await fetch(`${proxy.url}/listeners`)).text()).toMatch(/listener~8080::0\.0\.0\.0:8080/);
    const traffic = await labPf(['gateway', gw, '-n', ns]);
    // No HTTPRoute: the proxy itself answers, as Envoy does for a request without a route.
    const res = await send({ url: traffic.url, path: '/headers', host: 'nothing.example' });
    expect(res.status).toBe(404);
    expect(res.headers.server).toBe('envoy');
    proxy.child.kill('SIGINT');
    traffic.child.kill('SIGINT');
    expect(await exitCode(proxy.child)).toBe(0);
    expect(await exitCode(traffic.child)).toBe(0);
  });

  it('lab:pf says what is wrong and exits non-zero for an unknown Gateway', async () => {
    const child = script('lab-pf.ts', ['proxy', 'no-such-gateway']);
    expect(await exitCode(child)).toBe(1);
    expect(child.out()).toContain('no Gateway no-such-gateway; list them with: kubectl get gateways -A');
  });

  it('lab:up a second time reuses the running lab and changes nothing', async () => {
    const before = await lab.kube.get('apps/v1', 'Deployment', 'gwvendor', 'gwvendor-system');
    const child = script('lab-up.ts', []);
    expect(await exitCode(child), child.out()).toBe(0);
    expect(child.out()).toMatch(/already running \(pid \d+\); reusing it/);
    expect(child.out()).toContain(`Lab ${lab.name} is up (embedded, reused)`);
    const after = await lab.kube.get('apps/v1', 'Deployment', 'gwvendor', 'gwvendor-system');
    expect(after?.metadata?.generation).toBe(before?.metadata?.generation);
  }, 60_000);

  it('lab:reload rolls every deployment running the system image and prints them', async () => {
    const podsBefore = await lab.k([
      'get',
      'pods',
      '-n',
      'gwvendor-system',
      '-l',
      'app.orch.io/name=gwvendor',
      '-o',
      'name',
    ]);
    const child = script('lab-reload.ts', []);
    expect(await exitCode(child), child.out()).toBe(0);
    expect(child.out()).toContain('deployment gwvendor-system/gwvendor');
    expect(child.out()).toContain(`deployment ${ns}/${gw}`);
    // The pods serving now: as with `kubectl rollout status`, the rollout is complete once the old pod is
    // terminating, and kubectl still lists it (Terminating) until its process has exited.
    const after = JSON.parse(
      await lab.k(['get', 'pods', '-n', 'gwvendor-system', '-l', 'app.orch.io/name=gwvendor', '-o', 'json']),
    ) as { items: { metadata: { name: string; deletionTimestamp?: string } }[] };
    const serving = after.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => `pod/${p.metadata.name}`);
    expect(serving).not.toEqual([]);
    expect(serving).not.toContain(podsBefore.trim().split('\n')[0]);
    // The new control plane serves the Gateway again.
    await lab.kube.waitForCondition('gateway.networking.k8s.io/v1', 'Gateway', gw, ns, 'Programmed', {
      timeoutMs: 60_000,
    });
  }, 150_000);
});
