// A bare embedded cluster (the lab `bare`, no system installed) for the scenarios that install into a cluster as
// `lab:up --cluster existing` does (the lab `ext` on it), under a GWLAB_HOME of their own: kubectl against it, the
// repository's scripts run as a user runs them, and both labs stopped after the describe block that uses it.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { labDown, labUp } from '../../lab/lifecycle.ts';
import { Progress } from '../../lab/progress.ts';
import { tempDir } from '../../lab/testing/tmp.ts';
import { KUBECTL } from './lab.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr, one after the other. */
  out: string;
}

/** Runs a command from the repository root; resolves with its exit code and output, never throws. */
export function runCommand(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<RunResult>((resolve) => {
    execFile(cmd, args, { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({
        code: err ? ((err as { code?: number }).code ?? 1) : 0,
        stdout,
        stderr,
        out: `${stdout}\n${stderr}`,
      }),
    );
  });
}

export interface BareCluster {
  home: string;
  /** The environment the scripts run with: GWLAB_HOME, no colours, no VITEST_* (a nested vitest would take them). */
  env: NodeJS.ProcessEnv;
  kubeconfig(): string;
  context(): string;
  kubectl(args: string[]): Promise<RunResult>;
  /** A repository script run with Node (`scripts/lab-up.ts`, ...). */
  script(args: string[], timeoutMs?: number): Promise<RunResult>;
  /** `lab:up --cluster existing --name ext` against the bare cluster, with `extra` flags. */
  labUpExisting(extra?: string[]): Promise<RunResult>;
}

export function useBareCluster(prefix: string): BareCluster {
  const home = tempDir(prefix);
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries({ ...process.env, GWLAB_HOME: home, FORCE_COLOR: '0' }).filter(([k]) => !k.startsWith('VITEST')),
  );
  let kubeconfig = '';
  let context = '';

  beforeAll(async () => {
    const up = await labUp({
      name: 'bare',
      home,
      backend: 'embedded',
      noInstall: true,
      progress: new Progress({ quiet: true }),
    });
    kubeconfig = up.kubeconfig;
    context = up.context;
  }, 60_000);

  afterAll(async () => {
    const quiet = new Progress({ quiet: true });
    await labDown({ name: 'ext', home, progress: quiet }).catch(() => undefined);
    await labDown({ name: 'bare', home, progress: quiet }).catch(() => undefined);
  }, 60_000);

  const script = (args: string[], timeoutMs = 120_000) => runCommand(process.execPath, args, env, timeoutMs);
  return {
    home,
    env,
    kubeconfig: () => kubeconfig,
    context: () => context,
    kubectl: (args) =>
      runCommand(KUBECTL, [`--kubeconfig=${kubeconfig}`, `--context=${context}`, ...args], env, 60_000),
    script,
    labUpExisting: (extra = []) =>
      script([
        'scripts/lab-up.ts',
        ...['--cluster', 'existing', '--name', 'ext', '--kubeconfig', kubeconfig, '--context', context],
        ...extra,
      ]),
  };
}
