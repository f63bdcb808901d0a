// lab:up's failures: the step that failed, why (with the underlying cause, not just "fetch failed"), and what to run
// next. Against a kubeconfig whose server refuses connections, so no lab is needed. And npm run lab:up's entry
// (lab-up.mjs), which starts without Node's TypeScript stripper.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reasonOf } from '../lab/progress.ts';

const ROOT = join(import.meta.dirname, '..');
const run = (args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, args, { env, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
const tmp = mkdtempSync(join(tmpdir(), 'gwlab-lab-up-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('lab:up failures', () => {
  it('names the step, the cause and the command to run next', async () => {
    const port = await closedPort();
    const kubeconfig = join(tmp, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]
contexts: [{name: dead, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: x}}]
current-context: dead
`,
    );
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [join(ROOT, 'scripts', 'lab-up.ts'), '--cluster', 'existing', '--kubeconfig', kubeconfig],
        { env: { ...process.env, GWLAB_HOME: join(tmp, 'home'), FORCE_COLOR: '0' }, timeout: 30_000 },
        (err, _stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
      ),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('✗ reach the cluster (context dead)');
    expect(r.stderr).toMatch(
      new RegExp(
        `✗ step "reach the cluster \\(context dead\\)" failed: fetch failed \\(.*ECONNREFUSED 127\\.0\\.0\\.1:${port}`,
      ),
    );
    expect(r.stderr).toContain(`next: kubectl --kubeconfig ${kubeconfig} --context dead cluster-info`);
  });

  it('refuses a --gateway-api-channel other than standard or experimental before doing anything', async () => {
    const home = join(tmp, 'channel-home');
    const r = await run([join(ROOT, 'scripts', 'lab-up.ts'), '--gateway-api-channel', 'beta', '--home', home], {
      ...process.env,
      FORCE_COLOR: '0',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--gateway-api-channel beta: use standard or experimental');
    expect(existsSync(home)).toBe(false);
  });

  it('reasons include the causes below a generic message, once each', () => {
    const inner = new Error('connect ECONNREFUSED 127.0.0.1:6443');
    expect(reasonOf(new Error('fetch failed', { cause: inner }))).toBe(
      'fetch failed (connect ECONNREFUSED 127.0.0.1:6443)',
    );
    expect(reasonOf(new Error('boom: x', { cause: new Error('x') }))).toBe('boom: x');
    expect(reasonOf('plain')).toBe('plain');
  });
});

describe("npm run lab:up's entry", () => {
  it("loads lab:up without Node's TypeScript stripper, its modules from the compile cache (lab-up.ts alone needs it)", async () => {
    // Node loads its stripper (amaro) as the internal module internal/deps/amaro; a preload reports what was loaded.
    const probe = join(tmp, 'probe.cjs');
    writeFileSync(
      probe,
      "process.on('exit', () => process.stderr.write('LOADED ' + process.moduleLoadList.filter((m) => m.includes('amaro')).join(',') + '\\n'));\n",
    );
    // As a user runs it: no NODE_COMPILE_CACHE, so the cache is the default folder under TMPDIR (here the test's).
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, FORCE_COLOR: '0' };
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    const entry = (file: string) => run(['--require', probe, join(ROOT, 'scripts', file), '--help'], env);
    await entry('lab-up.mjs'); // fills the cache
    const mjs = await entry('lab-up.mjs');
    const ts = await entry('lab-up.ts');
    expect(mjs.stdout).toContain('usage: npm run lab:up');
    expect(mjs.stderr).toMatch(/^LOADED $/m);
    expect(ts.stdout).toBe(mjs.stdout);
    expect(ts.stderr).toMatch(/^LOADED .*amaro/m);
  });
});
