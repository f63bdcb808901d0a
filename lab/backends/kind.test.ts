import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tempDir } from '../testing/tmp.ts';
import { execaRunner } from './exec.ts';
import { K3S_IMAGE, k3sContainerSpec, k3sImportImage } from './k3s.ts';
import { CLOUD_PROVIDER_KIND_IMAGE, KIND_NODE_IMAGE, kindDown, kindUp, renderKindConfig } from './kind.ts';

/** A directory of stand-ins for kind and docker that record every call and answer like the real commands. */
function recordingPath(clusters: string[] = []) {
  const dir = tempDir('gwlab-standin-');
  const log = join(dir, 'calls.log');
  const script = (name: string, body: string) => {
    const p = join(dir, name);
    writeFileSync(p, `#!/bin/sh\necho "${name} $*" >> ${log}\n${body}\n`);
    chmodSync(p, 0o755);
  };
  script('kind', `[ "$1 $2" = "get clusters" ] && printf '${clusters.join('\\n')}\\n'; exit 0`);
  script('docker', `[ "$1" = "inspect" ] && exit 1; exit 0`);
  return {
    env: { ...process.env, PATH: `${dir}:/usr/bin:/bin` },
    calls: () => readFileSync(log, 'utf8').trim().split('\n'),
  };
}

const step = <T>(_name: string, fn: () => Promise<T>) => fn();

describe('kind backend', () => {
  it('renders a cluster config pinned to a node image, with dnsSearch: []', () => {
    const cfg = parse(renderKindConfig('demo'));
    expect(cfg).toMatchObject({ kind: 'Cluster', apiVersion: 'kind.x-k8s.io/v1alpha4', name: 'demo' });
    expect(cfg.networking.dnsSearch).toEqual([]);
    expect(cfg.nodes[0]).toEqual({ role: 'control-plane', image: KIND_NODE_IMAGE });
    expect(KIND_NODE_IMAGE).toMatch(/^kindest\/node:v1\.32\.\d+@sha256:[0-9a-f]{64}$/);
  });

  it('runs create, build, load and cloud-provider-kind in order', async () => {
    const rec = recordingPath();
    const stateDir = tempDir('gwlab-kind-');
    const out = await kindUp({
      labName: 'demo',
      stateDir,
      repoRoot: '/repo',
      image: 'gwlab.local/system:0.1.0',
      runner: execaRunner(rec.env),
      step,
    });
    expect(out.context).toBe('kind-demo');
    expect(rec.calls()).toEqual([
      'kind get clusters',
      `kind create cluster --name demo --config ${stateDir}/kind.yaml --kubeconfig ${stateDir}/kubeconfig --wait 120s`,
      'docker build -t gwlab.local/system:0.1.0 -f /repo/system/Dockerfile /repo',
      'kind load docker-image gwlab.local/system:0.1.0 --name demo',
      'docker inspect -f {{.State.Running}} gwlab-cloud-provider-kind-demo',
      'docker rm -f gwlab-cloud-provider-kind-demo',
      `docker run -d --name gwlab-cloud-provider-kind-demo --network kind -v /var/run/docker.sock:/var/run/docker.sock ${CLOUD_PROVIDER_KIND_IMAGE} --gateway-channel=disabled --enable-default-ingress=false`,
    ]);
  });

  it('reuses an existing cluster (running lab:up twice is safe)', async () => {
    const rec = recordingPath(['demo']);
    const stateDir = tempDir('gwlab-kind-');
    await kindUp({ labName: 'demo', stateDir, repoRoot: '/r', image: 'i:1', runner: execaRunner(rec.env), step });
    expect(rec.calls()[1]).toBe(`kind export kubeconfig --name demo --kubeconfig ${stateDir}/kubeconfig`);
    expect(rec.calls().some((c) => c.startsWith('kind create'))).toBe(false);
  });

  it('tears down the cluster and cloud-provider-kind', async () => {
    const rec = recordingPath();
    await kindDown('demo', execaRunner(rec.env));
    expect(rec.calls()).toEqual(['docker rm -f gwlab-cloud-provider-kind-demo', 'kind delete cluster --name demo']);
  });
});

describe('k3s backend', () => {
  it('starts k3s without traefik, named and labelled for lab:down, outside the reaper', () => {
    const spec = k3sContainerSpec('demo');
    expect(spec).toMatchObject({
      image: K3S_IMAGE,
      name: 'gwlab-k3s-demo',
      command: ['server', '--disable=traefik'],
      labels: { 'dev.gwlab.lab': 'demo' },
      env: { TESTCONTAINERS_RYUK_DISABLED: 'true' },
    });
    expect(K3S_IMAGE).toMatch(/^rancher\/k3s:v1\.32\./);
  });

  it('imports the image with docker save, copy and ctr import', async () => {
    const rec = recordingPath();
    const calls: string[] = [];
    await k3sImportImage(
      'gwlab.local/system:0.1.0',
      {
        copyFilesToContainer: async (files) => {
          calls.push(`copy ${files.map((f) => f.target).join(',')}`);
        },
        exec: async (cmd) => {
          calls.push(cmd.join(' '));
          return { exitCode: 0, output: '' };
        },
      },
      execaRunner(rec.env),
    );
    expect(rec.calls()[0]).toMatch(/^docker save -o \S+\/image\.tar gwlab\.local\/system:0\.1\.0$/);
    expect(calls).toEqual([
      'copy /tmp/gwlab-image.tar',
      'ctr -n k8s.io images import /tmp/gwlab-image.tar',
      'rm -f /tmp/gwlab-image.tar',
    ]);
  });
});
