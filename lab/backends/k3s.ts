// The k3s backend: a k3s server in a container started with Testcontainers. The system image is built with docker,
// saved, copied into the container and imported with `ctr -n k8s.io images import`. LoadBalancer addresses come from
// k3s's own service load balancer (the node's address). Testcontainers' reaper is disabled for this container, since
// the cluster must outlive the `lab:up` command; `lab:down` removes it by name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandRunner } from './exec.ts';

export const K3S_IMAGE = 'rancher/k3s:v1.32.2-k3s1';

export function k3sContainerName(labName: string): string {
  return `gwlab-k3s-${labName}`;
}

/** What the container is started with; a pure function so that it is tested where no engine runs. */
export function k3sContainerSpec(labName: string) {
  return {
    image: K3S_IMAGE,
    name: k3sContainerName(labName),
    // Traefik would take ports 80/443 on the node and bring its own Gateway API CRDs; gwlab brings its own gateway.
    command: ['server', '--disable=traefik'],
    labels: { 'dev.gwlab.lab': labName, 'dev.gwlab.backend': 'k3s' },
    env: { TESTCONTAINERS_RYUK_DISABLED: 'true' },
  };
}

/** The minimal surface of a started container that image import needs (a StartedK3sContainer provides it). */
export interface ImportTarget {
  copyFilesToContainer(files: { source: string; target: string }[]): Promise<void>;
  exec(cmd: string[]): Promise<{ exitCode: number; output: string }>;
}

export async function k3sImportImage(image: string, target: ImportTarget, runner: CommandRunner): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-k3s-image-'));
  const tar = join(dir, 'image.tar');
  try {
    await runner.run('docker', ['save', '-o', tar, image]);
    await target.copyFilesToContainer([{ source: tar, target: '/tmp/gwlab-image.tar' }]);
    const r = await target.exec(['ctr', '-n', 'k8s.io', 'images', 'import', '/tmp/gwlab-image.tar']);
    if (r.exitCode !== 0) throw new Error(`ctr images import ${image} failed: ${r.output.trim()}`);
    await target.exec(['rm', '-f', '/tmp/gwlab-image.tar']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface K3sUpOptions {
  labName: string;
  repoRoot: string;
  image: string;
  runner: CommandRunner;
  step: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
}

/** Starts k3s (or finds the running one), builds and imports the system image, and returns the kubeconfig text. */
export async function k3sUp(o: K3sUpOptions): Promise<{ kubeconfigYaml: string; context: string }> {
  const spec = k3sContainerSpec(o.labName);
  Object.assign(process.env, spec.env);
  const existing = await o.runner.run('docker', ['inspect', '-f', '{{.State.Running}}', spec.name], {
    allowFailure: true,
  });
  if (existing.exitCode === 0 && existing.stdout.trim() === 'true') {
    throw new Error(
      `a k3s lab named ${o.labName} is already running (container ${spec.name}); use --cluster existing with its kubeconfig, or npm run lab:down -- --name ${o.labName}`,
    );
  }
  await o.step(`docker build ${o.image}`, () =>
    o.runner.run('docker', ['build', '-t', o.image, '-f', join(o.repoRoot, 'system', 'Dockerfile'), o.repoRoot]),
  );
  const { K3sContainer } = await import('@testcontainers/k3s');
  const started = await o.step(`k3s container ${spec.name} (${spec.image})`, () =>
    new K3sContainer(spec.image).withName(spec.name).withLabels(spec.labels).withCommand(spec.command).start(),
  );
  await o.step(`import ${o.image} into k3s`, () => k3sImportImage(o.image, started, o.runner));
  return { kubeconfigYaml: started.getKubeConfig(), context: 'default' };
}

export async function k3sDown(labName: string, runner: CommandRunner): Promise<void> {
  await runner.run('docker', ['rm', '-f', '-v', k3sContainerName(labName)], { allowFailure: true });
}
