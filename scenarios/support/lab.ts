// What a scenario file gets: the lab's kubeconfig, a Kube client, kubectl, and a per-scenario namespace helper.
import { execFile } from 'node:child_process';
import { inject } from 'vitest';
import { Kube } from '../../lab/toolkit/kube.ts';

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

export interface ScenarioLab {
  kubeconfig: string;
  context: string;
  name: string;
  home: string;
  backend: string;
  kube: Kube;
  /** Runs kubectl against the lab; resolves with code/stdout/stderr, never throws. */
  kubectl(
    args: string[],
    opts?: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** kubectl that must succeed. */
  k(args: string[], input?: string): Promise<string>;
}

let lab: ScenarioLab | undefined;

export function useLab(): ScenarioLab {
  if (lab) return lab;
  const kubeconfig = inject('kubeconfig');
  const context = inject('context');
  const kube = Kube.fromFile(kubeconfig, context || undefined);
  const kubectl: ScenarioLab['kubectl'] = (args, opts = {}) =>
    new Promise((resolve) => {
      const child = execFile(
        KUBECTL,
        [`--kubeconfig=${kubeconfig}`, ...(context ? [`--context=${context}`] : []), ...args],
        { timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 << 20, env: { ...process.env, ...opts.env } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  lab = {
    kubeconfig,
    context,
    name: inject('labName'),
    home: inject('labHome'),
    backend: inject('backend'),
    kube,
    kubectl,
    async k(args, input) {
      const r = await kubectl(args, { input });
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
      return r.stdout;
    },
  };
  return lab;
}

/** A namespace name unique to this run, for scenarios that run in namespaces of their own. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid.toString(36)}${Math.floor(Math.random() * 1296)
    .toString(36)
    .padStart(2, '0')}`;
}
