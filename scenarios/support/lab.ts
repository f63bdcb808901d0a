// What a scenario file gets: its worker's lab (labs.ts) with its kubeconfig, a Kube client, kubectl, and a
// per-scenario namespace helper.
import { execFile } from 'node:child_process';
import { beforeAll, inject } from 'vitest';
import { Kube } from '../../lab/toolkit/kube.ts';
import { labOfWorker, type ProvidedLab } from './labs.ts';

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

/** The lab this worker runs its file on (one per concurrently running file: labs.ts). */
export function workerLab(): ProvidedLab {
  return labOfWorker(inject('labs'));
}

export function useLab(): ScenarioLab {
  const provided = workerLab();
  // Which lab ran this file, for the run's summary (lab/report/files-reporter.ts): registered for every file, since
  // the files of a worker share this module (isolate: false) and so the lab below.
  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  beforeAll(({}, suite) => {
    suite.file.meta.lab = provided.name;
  });
  if (lab) return lab;
  const { kubeconfig, context } = provided;
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
    name: provided.name,
    home: provided.home,
    backend: provided.backend,
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
