// The image entry point, run as the image runs it: node_modules/.bin/node + system/main.ts, checked by exit code and
// output. Every process started here is killed in teardown.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, systemEntrypoint } from './image.ts';

const NODE = join(REPO_ROOT, 'node_modules', '.bin', 'node');
const [, MAIN] = systemEntrypoint();

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

function start(args: string[], main = MAIN, env: NodeJS.ProcessEnv = process.env): Run {
  const child = spawn(NODE, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function run(args: string[], main = MAIN) {
  const r = start(args, main);
  const { code } = await r.exited;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

/** Waits for a JSON line on stdout that matches, failing with what the process printed when it exits first. */
async function jsonLine(r: Run, match: (rec: any) => boolean, timeoutMs = 15_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const line of r.stdout().split('\n')) {
      if (!line.startsWith('{')) continue;
      const rec = JSON.parse(line);
      if (match(rec)) return rec;
    }
    if (r.child.exitCode !== null || Date.now() > until) {
      throw new Error(`no matching line; stdout:\n${r.stdout()}\nstderr:\n${r.stderr()}`);
    }
    await new Promise((res) => setTimeout(res, 20));
  }
}

afterEach(() => {
  for (const c of running) c.kill('SIGKILL');
});

describe('system/main.ts dispatch', () => {
  it('with no component exits 2 with a usage message naming the components', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no component given/);
    expect(r.stderr).toMatch(/controlplane \| proxy \| sampleapp \| extauth/);
  });

  it('with an unknown component exits 2 naming it and the valid ones', async () => {
    const r = await run(['gateway', '--port', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown component "gateway"/);
    expect(r.stderr).toMatch(/controlplane \| proxy \| sampleapp \| extauth/);
  });

  it('--help prints the usage and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/usage: main.ts <component>/);
  });

  it('runs the sample application with its args, serves /headers, and exits 0 on SIGTERM', async () => {
    const r = start(['sampleapp', '--port', '0', '--host', '127.0.0.1']);
    const { port } = await jsonLine(r, (rec) => rec.msg === 'listening');
    const res = await fetch(`http://127.0.0.1:${port}/headers`, { headers: { 'user-agent': 'main-test' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { headers: Record<string, string[]> };
    expect(body.headers['User-Agent']).toEqual(['main-test']);
    const access = await jsonLine(r, (rec) => rec.msg === 'access');
    expect(access).toMatchObject({ component: 'sampleapp', uri: '/headers', status: 200 });
    r.child.kill('SIGTERM');
    expect((await r.exited).code).toBe(0);
  });

  it('runs the ext-auth sample: allow with the header, 403 without, exits 0 on SIGTERM', async () => {
    const r = start(['extauth', '--port', '0', '--host', '127.0.0.1']);
    const { port } = await jsonLine(r, (rec) => rec.msg === 'listening');
    expect((await fetch(`http://127.0.0.1:${port}/x`, { headers: { 'x-ext-authz': 'allow' } })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/x`)).status).toBe(403);
    await jsonLine(r, (rec) => rec.msg === 'denied');
    r.child.kill('SIGTERM');
    expect((await r.exited).code).toBe(0);
  });

  it("writes the component's compile cache once it has started (default folder: <tmpdir>/node-compile-cache)", async () => {
    // Node's compile cache (module.enableCompileCache): the next start loads the modules without compiling them.
    const tmp = mkdtempSync(join(tmpdir(), 'gwlab-main-cache-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
      delete env.NODE_COMPILE_CACHE;
      delete env.NODE_DISABLE_COMPILE_CACHE;
      const r = start(['sampleapp', '--port', '0', '--host', '127.0.0.1'], MAIN, env);
      await jsonLine(r, (rec) => rec.msg === 'listening');
      // Written while it runs (flushed right after start), not only at exit.
      const cached = () => {
        try {
          return readdirSync(join(tmp, 'node-compile-cache'), { recursive: true, withFileTypes: true }).filter((f) =>
            f.isFile(),
          ).length;
        } catch {
          return 0;
        }
      };
      for (let i = 0; i < 100 && cached() === 0; i++) await new Promise((res) => setTimeout(res, 20));
      expect(cached()).toBeGreaterThan(0);
      expect(r.child.exitCode).toBe(null);
      r.child.kill('SIGTERM');
      expect((await r.exited).code).toBe(0);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a component rejecting its args exits 1 with a message naming the flag', async () => {
    const bad = await run(['sampleapp', '--port', '99999']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/sampleapp: --port: expected a port number from 0 to 65535, got "99999"/);
    const unknown = await run(['extauth', '--nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/extauth: .*--nope/);
  });
});

describe('system/main.ts with components that are missing, broken or echoing (a copy in a temp dir)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-main-'));
  const main = join(dir, 'system', 'main.ts');
  mkdirSync(join(dir, 'system', 'proxy'), { recursive: true });
  mkdirSync(join(dir, 'system', 'extauth'), { recursive: true });
  copyFileSync(MAIN, main);
  // What main.ts itself imports (the dependency bundles' hook: no node_modules in the copy, so it does nothing there;
  // node:http's deferred exports).
  mkdirSync(join(dir, 'system', 'shared'), { recursive: true });
  for (const f of ['dep-bundles.ts', 'http-exports.ts'])
    copyFileSync(join(dirname(MAIN), 'shared', f), join(dir, 'system', 'shared', f));
  // An echoing component shows the args arrive unchanged.
  writeFileSync(
    join(dir, 'system', 'proxy', 'main.ts'),
    'export async function main(args: string[]): Promise<void> { console.log(JSON.stringify(args)); }\n',
  );
  // A component that fails while loading must not take the dispatcher's message with it.
  writeFileSync(join(dir, 'system', 'extauth', 'main.ts'), "throw new Error('broken at load');\n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the remaining args to the component unchanged', async () => {
    const args = ['-c', '/etc/envoy/envoy.yaml', '--service-node', 'p.ns', '--config-yaml', '{"a": "b c"}', ''];
    const r = await run(['proxy', ...args], main);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(args);
  });

  it('reports a component that is not built yet, without breaking the others', async () => {
    const r = await run(['controlplane'], main);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/component controlplane is not built yet: .*system\/controlplane\/main.ts does not exist/);
  });

  it('reports a component that fails to load with exit 1 and its error', async () => {
    const r = await run(['extauth'], main);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/extauth: broken at load/);
  });
});
