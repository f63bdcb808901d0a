// Test helpers: a throw-away API server (temp GWLAB_HOME, its own lab name) and the machine's real kubectl pointed at
// it with a fresh discovery cache.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogRegistry } from '../../../../system/shared/log.ts';
import { type ApiServerHandle, type ApiServerOptions, startApiServer } from '../index.ts';

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface TestLab {
  home: string;
  name: string;
  server: ApiServerHandle;
  /** Runs kubectl against the server; never throws on a non-zero exit. */
  kubectl(args: string[], opts?: { input?: string; kubeconfig?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** kubectl that must succeed (throws with stderr otherwise). */
  k(args: string[], input?: string): Promise<string>;
  /** Writes a file in the lab's temp folder and returns its path. */
  file(name: string, content: string): string;
  /** A kubeconfig for a bearer token (e.g. a service-account token). */
  kubeconfigFor(token: string, name: string): string;
  restart(extra?: Partial<ApiServerOptions>): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestLab(opts: Partial<ApiServerOptions> = {}): Promise<TestLab> {
  const home = mkdtempSync(join(tmpdir(), 'gwlab-apiserver-test-'));
  const name = opts.labName ?? 'test';
  const logs = new LogRegistry({ level: 'warn', sink: (l) => process.stderr.write(`${l}\n`) });
  const start = (extra: Partial<ApiServerOptions> = {}) =>
    startApiServer({ labName: name, home, logRegistry: logs, ...opts, ...extra });
  let server = await start();
  const cacheDir = join(home, 'kubectl-cache');
  const lab: TestLab = {
    home,
    name,
    get server() {
      return server;
    },
    kubectl(args, o = {}) {
      return new Promise((resolve) => {
        const child = execFile(
          KUBECTL,
          [`--kubeconfig=${o.kubeconfig ?? server.kubeconfigPath}`, `--cache-dir=${cacheDir}`, ...args],
          { timeout: o.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: '' } },
          (err, stdout, stderr) => {
            resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
          },
        );
        if (o.input !== undefined) child.stdin?.end(o.input);
      });
    },
    async k(args, input) {
      const r = await lab.kubectl(args, { input });
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
      return r.stdout;
    },
    file(fname, content) {
      const p = join(home, fname);
      writeFileSync(p, content);
      return p;
    },
    kubeconfigFor(token, kname) {
      const url = server.url;
      const p = join(home, `kubeconfig-${kname}`);
      writeFileSync(
        p,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: c',
          `  cluster: {server: "${url}", certificate-authority-data: "${Buffer.from(server.caPem).toString('base64')}"}`,
          'users:',
          `- name: u`,
          `  user: {token: "${token}"}`,
          'contexts:',
          '- name: c',
          '  context: {cluster: c, user: u}',
          'current-context: c',
          '',
        ].join('\n'),
      );
      return p;
    },
    async restart(extra = {}) {
      await server.stop();
      server = await start(extra);
    },
    async stop() {
      await server.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
  return lab;
}
