// The tools pick their cluster by kubectl's rules (scripts/cli.ts openLab → lab/toolkit/kubeconfig.ts), end to end:
// lab:status and explain run as a user runs them, with an exported KUBECONFIG, --context, --kubeconfig and --name,
// against kubeconfigs whose servers are closed loopback ports, so the port the tool tried tells which one it took.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLabRecord } from '../lab/state.ts';

const ROOT = join(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'gwlab-cli-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Loopback ports nothing listens on (bound, then released). */
async function closedPorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, async () => {
      const srv = net.createServer();
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
      return srv;
    }),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function kubeconfig(file: string, contexts: { name: string; port: number }[], current: string): string {
  const path = join(tmp, file);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [${contexts.map((c) => `{name: ${c.name}, cluster: {server: "https://127.0.0.1:${c.port}"}}`).join(', ')}]
contexts: [${contexts.map((c) => `{name: ${c.name}, context: {cluster: ${c.name}, user: u}}`).join(', ')}]
users: [{name: u, user: {token: x}}]
current-context: ${current}
`,
  );
  return path;
}

function tool(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(ROOT, 'scripts', script), ...args],
      { env: { ...process.env, KUBECONFIG: '', HOME: join(tmp, 'user'), FORCE_COLOR: '0', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('the tools follow kubectl configuration rules', () => {
  let ports: number[];
  let user: string;
  const home = join(tmp, 'gwlab-home');

  beforeAll(async () => {
    ports = await closedPorts(3);
    user = kubeconfig(
      'user.yaml',
      [
        { name: 'one', port: ports[0] },
        { name: 'two', port: ports[1] },
      ],
      'one',
    );
    // The default lab, which the tools used to fall back to whatever the environment said.
    const lab = kubeconfig('lab.yaml', [{ name: 'gwlab-gwlab', port: ports[2] }], 'gwlab-gwlab');
    writeLabRecord({ name: 'gwlab', index: 0, backend: 'embedded', kubeconfig: lab, context: 'gwlab-gwlab' }, home);
  });

  /** The API server lab:status -o json reports it tried. */
  async function statusServer(args: string[], env: Record<string, string>): Promise<string> {
    const r = await tool('lab-status.ts', ['-o', 'json', ...args], { GWLAB_HOME: home, ...env });
    expect(r.code, r.stderr).toBe(1);
    return JSON.parse(r.stdout).cluster.server;
  }

  it('lab:status: an exported KUBECONFIG, then --context, then --kubeconfig, then --name', async () => {
    expect(await statusServer([], { KUBECONFIG: user })).toBe(`https://127.0.0.1:${ports[0]}`);
    expect(await statusServer(['--context', 'two'], { KUBECONFIG: user })).toBe(`https://127.0.0.1:${ports[1]}`);
    expect(await statusServer(['--kubeconfig', user, '--context', 'two'], {})).toBe(`https://127.0.0.1:${ports[1]}`);
    expect(await statusServer(['--name', 'gwlab'], { KUBECONFIG: user })).toBe(`https://127.0.0.1:${ports[2]}`);
    // Nothing set: the default lab.
    expect(await statusServer([], {})).toBe(`https://127.0.0.1:${ports[2]}`);
  });

  it('explain takes the same rules, and says so when a context is not there', async () => {
    const r = await tool('explain.ts', ['httproute/web', '--context', 'nope'], { GWLAB_HOME: home, KUBECONFIG: user });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`✗ context nope is not in KUBECONFIG (${user}); its contexts: one, two`);
    const both = await tool('explain.ts', ['httproute/web', '--name', 'gwlab', '--kubeconfig', user], {
      GWLAB_HOME: home,
    });
    expect(both.stderr).toContain(`✗ --name gwlab and --kubeconfig ${user} each pick a cluster: give one`);
  });
});
