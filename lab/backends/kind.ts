// The kind backend: a kind cluster pinned to a node image, the system image built with docker and loaded with
// `kind load docker-image`, LoadBalancer addresses from cloud-provider-kind (its Gateway controller disabled, since
// gwlab brings its own Gateway API CRDs and controller).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { CommandRunner } from './exec.ts';

/** kind v0.27.0's image for Kubernetes 1.32, pinned by digest (the version kubectl on these machines speaks). */
export const KIND_NODE_IMAGE =
  'kindest/node:v1.32.2@sha256:f226345927d7e348497136874b6d207e0b32cc52154ad8323129352923a3142f';
export const CLOUD_PROVIDER_KIND_IMAGE = 'registry.k8s.io/cloud-provider-kind/cloud-controller-manager:v0.12.0';

export function kindClusterName(labName: string): string {
  return labName;
}

export function kindContext(labName: string): string {
  return `kind-${kindClusterName(labName)}`;
}

export function cloudProviderContainerName(labName: string): string {
  return `gwlab-cloud-provider-kind-${labName}`;
}

/** The kind cluster config. `dnsSearch: []` keeps the host's search domains out of pods, as Envoy Gateway's e2e does. */
export function renderKindConfig(labName: string, opts: { workers?: number } = {}): string {
  const nodes: Record<string, unknown>[] = [{ role: 'control-plane', image: KIND_NODE_IMAGE }];
  for (let i = 0; i < (opts.workers ?? 0); i++) nodes.push({ role: 'worker', image: KIND_NODE_IMAGE });
  return stringify({
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    name: kindClusterName(labName),
    networking: { dnsSearch: [] },
    nodes,
  });
}

export interface KindUpOptions {
  labName: string;
  stateDir: string;
  repoRoot: string;
  image: string;
  runner: CommandRunner;
  step: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
}

export interface KindCluster {
  kubeconfig: string;
  context: string;
}

/** Creates (or reuses) the cluster, builds and loads the system image, and starts cloud-provider-kind. Idempotent. */
export async function kindUp(o: KindUpOptions): Promise<KindCluster> {
  mkdirSync(o.stateDir, { recursive: true });
  const configPath = join(o.stateDir, 'kind.yaml');
  const kubeconfig = join(o.stateDir, 'kubeconfig');
  const name = kindClusterName(o.labName);
  writeFileSync(configPath, renderKindConfig(o.labName));

  await o.step(`kind cluster ${name}`, async () => {
    const existing = (await o.runner.run('kind', ['get', 'clusters'])).stdout.split('\n').map((s) => s.trim());
    if (existing.includes(name)) {
      await o.runner.run('kind', ['export', 'kubeconfig', '--name', name, '--kubeconfig', kubeconfig]);
    } else {
      await o.runner.run('kind', [
        'create',
        'cluster',
        '--name',
        name,
        '--config',
        configPath,
        '--kubeconfig',
        kubeconfig,
        '--wait',
        '120s',
      ]);
    }
  });
  await kindLoadSystemImage(o);
  await o.step('cloud-provider-kind (LoadBalancer addresses)', async () => {
    const cname = cloudProviderContainerName(o.labName);
    const running = await o.runner.run('docker', ['inspect', '-f', '{{.State.Running}}', cname], {
      allowFailure: true,
    });
    if (running.exitCode === 0 && running.stdout.trim() === 'true') return;
    await o.runner.run('docker', ['rm', '-f', cname], { allowFailure: true });
    await o.runner.run('docker', [
      'run',
      '-d',
      '--name',
      cname,
      '--network',
      'kind',
      '-v',
      '/var/run/docker.sock:/var/run/docker.sock',
      CLOUD_PROVIDER_KIND_IMAGE,
      '--gateway-channel=disabled',
      '--enable-default-ingress=false',
    ]);
  });
  return { kubeconfig, context: kindContext(o.labName) };
}

/** docker build of the system image, then kind load. Also the first half of `lab:reload` on kind. */
export async function kindLoadSystemImage(o: Omit<KindUpOptions, 'stateDir'>): Promise<void> {
  await o.step(`docker build ${o.image}`, () =>
    o.runner.run('docker', ['build', '-t', o.image, '-f', join(o.repoRoot, 'system', 'Dockerfile'), o.repoRoot]),
  );
  await o.step(`kind load docker-image ${o.image}`, () =>
    o.runner.run('kind', ['load', 'docker-image', o.image, '--name', kindClusterName(o.labName)]),
  );
}

export async function kindDown(labName: string, runner: CommandRunner): Promise<void> {
  await runner.run('docker', ['rm', '-f', cloudProviderContainerName(labName)], { allowFailure: true });
  await runner.run('kind', ['delete', 'cluster', '--name', kindClusterName(labName)]);
}
