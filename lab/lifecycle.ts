// lab:up / lab:down on every backend. The cluster part differs per backend; the install step is shared.
// What only some paths need is loaded when they run: the container backends (execa), and the install step with the
// Kubernetes client (@kubernetes/client-node: ~870 modules, ~0.4 s of CPU even from the compile cache), which lab:up
// on the embedded backend loads while the lab process starts on the other core instead of before starting it. The
// install begins as soon as the lab process's API server serves (its record says `starting`), beside the start of its
// controllers and node agent: the "embedded cluster" step still ends when they have started, before any Ready wait.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { REPO_ROOT, SYSTEM_IMAGE } from '../system/image.ts';
import type { GatewayApiChannel } from '../system/manifests/gateway-api.ts';
import { runningLab, spawnLabProcess, stopLabProcess } from './embedded/process.ts';
import type { Validation } from './install.ts';
import type { Progress } from './progress.ts';
import { type LabRecord, labPaths, readLabRecord, writeLabRecord } from './state.ts';
import type { ResolvedKubeconfig } from './toolkit/kubeconfig.ts';

/** The install step's modules and the Kubernetes client's, loaded once, on first use. */
let installModules: Promise<[typeof import('./toolkit/kube.ts'), typeof import('./install.ts')]> | undefined;
function loadInstall() {
  installModules ??= Promise.all([import('./toolkit/kube.ts'), import('./install.ts')]);
  return installModules;
}

/** The container backends' modules (execa and the kind and k3s command sequences). */
const loadBackends = () =>
  Promise.all([
    import('./backends/docker.ts'),
    import('./backends/exec.ts'),
    import('./backends/kind.ts'),
    import('./backends/k3s.ts'),
  ]).then(([docker, exec, kind, k3s]) => ({ ...docker, ...exec, ...kind, ...k3s }));

export type Backend = LabRecord['backend'];
export const BACKENDS: Backend[] = ['embedded', 'kind', 'k3s', 'existing'];

export interface UpOptions {
  name: string;
  home: string;
  backend: Backend;
  progress: Progress;
  withSampleApp?: boolean;
  withExtAuth?: boolean;
  validation?: Validation;
  /** The Gateway API channel installed on a cluster that has no Gateway API CRDs (default standard). */
  gatewayApiChannel?: GatewayApiChannel;
  mergeKubeconfig?: boolean;
  /** existing backend: the kubeconfig file and context to use. */
  kubeconfig?: string;
  context?: string;
  forceLbPortFallback?: boolean;
  /** embedded: kube-apiserver's --service-account-max-token-expiration (seconds), for short-lived pod tokens. */
  saTokenMaxExpirationSeconds?: number;
  /** Skip the install step (cluster only). */
  noInstall?: boolean;
}

export interface UpResult {
  record: LabRecord;
  kubeconfig: string;
  context: string;
  reused: boolean;
}

/** `--cluster existing`: a private kubeconfig of the chosen context, and a first request that proves it reaches it. */
async function existingUp(
  o: UpOptions,
  paths: ReturnType<typeof labPaths>,
  p: UpOptions['progress'],
): Promise<LabRecord> {
  // kubectl's rules (--kubeconfig > KUBECONFIG merged > ~/.kube/config, --context), as every tool applies them.
  const { kubeconfigOfContext, resolveKubeconfig } = await import('./toolkit/kubeconfig.ts');
  const [{ Kube }] = await loadInstall();
  let resolved: ResolvedKubeconfig;
  try {
    resolved = resolveKubeconfig({ kubeconfig: o.kubeconfig, context: o.context, home: o.home, kubectlOnly: true });
  } catch (err) {
    throw new Error(`--cluster existing: ${(err as Error).message}`);
  }
  const context = resolved.context;
  const src = resolved.files.join(delimiter);
  mkdirSync(paths.root, { recursive: true });
  // A private copy of that one context, so that a later edit of the user's files does not move the lab.
  writeFileSync(paths.kubeconfig, kubeconfigOfContext(resolved), { mode: 0o600 });
  const record: LabRecord = {
    name: o.name,
    index: -1,
    backend: 'existing',
    kubeconfig: paths.kubeconfig,
    context,
    source: src,
  };
  await p.step(
    `reach the cluster (context ${context})`,
    async () => {
      await Kube.fromFile(paths.kubeconfig, context).core.listNamespace({ limit: 1 });
    },
    {
      hint: `${resolved.files.length > 1 ? `KUBECONFIG=${src} kubectl` : `kubectl --kubeconfig ${src}`} --context ${context} cluster-info`,
    },
  );
  return record;
}

export async function labUp(o: UpOptions): Promise<UpResult> {
  const p = o.progress;
  const paths = labPaths(o.name, o.home);
  const previous = readLabRecord(o.name, o.home);
  if (previous && previous.backend !== o.backend && previous.backend !== 'existing') {
    throw new Error(
      `lab ${o.name} already exists with backend ${previous.backend}; run npm run lab:down -- --name ${o.name} first, or pick another --name`,
    );
  }
  let record: LabRecord;
  let reused = false;
  /** Embedded: the lab process's controllers and node agent have started (the install runs alongside). */
  let clusterStarted: Promise<void> | undefined;
  /** Embedded: the lab process starts on no stored state (its API server creates the store): the cluster is empty. */
  let newCluster = false;
  switch (o.backend) {
    case 'embedded': {
      const running = await runningLab(o.name, o.home);
      if (running) {
        reused = true;
        record = running;
        p.info(`embedded lab ${o.name} is already running (pid ${running.pid}); reusing it`);
        if (o.saTokenMaxExpirationSeconds !== running.saTokenMaxExpirationSeconds && o.saTokenMaxExpirationSeconds) {
          p.info(`--sa-token-max-expiration applies when the lab process starts: npm run lab:down first to change it`);
        }
      } else {
        // The step ends when the controllers and the node agent have started; the install begins as soon as the API
        // server serves (record), so the control plane's objects go in while they start.
        newCluster = !existsSync(paths.store);
        let serving!: (rec: LabRecord) => void;
        const apiServerServes = new Promise<LabRecord>((resolve) => (serving = resolve));
        clusterStarted = p.step(
          'embedded cluster (API server, controllers, node agent)',
          async () => {
            const spawned = spawnLabProcess({
              name: o.name,
              home: o.home,
              forceLbPortFallback: o.forceLbPortFallback,
              saTokenMaxExpirationSeconds: o.saTokenMaxExpirationSeconds,
            });
            // The lab process is spawned (synchronously, above): load the install step and parse its manifests meanwhile.
            if (!o.noInstall)
              loadInstall()
                .then(([, install]) => install.preloadManifests(o.gatewayApiChannel))
                .catch(() => {});
            const { record, started } = await spawned;
            serving(record);
            await started;
          },
          {
            hint: `read ${join(paths.root, 'lab-process.log')}; then npm run lab:down -- --name ${o.name} and try again`,
          },
        );
        record = await Promise.race([apiServerServes, clusterStarted.then(() => apiServerServes)]);
      }
      break;
    }
    case 'kind': {
      const { requireContainerTools, execaRunner, kindUp } = await loadBackends();
      await p.step('container engine and kind', () => requireContainerTools('kind'));
      const runner = execaRunner(process.env, (l) => p.info(l));
      const c = await kindUp({
        labName: o.name,
        stateDir: paths.root,
        repoRoot: REPO_ROOT,
        image: SYSTEM_IMAGE,
        runner,
        step: (n, f) => p.step(n, f),
      });
      record = { name: o.name, index: -1, backend: 'kind', kubeconfig: c.kubeconfig, context: c.context };
      break;
    }
    case 'k3s': {
      const { requireContainerTools, execaRunner, k3sUp } = await loadBackends();
      await p.step('container engine', () => requireContainerTools('k3s'));
      const runner = execaRunner(process.env, (l) => p.info(l));
      const c = await k3sUp({
        labName: o.name,
        repoRoot: REPO_ROOT,
        image: SYSTEM_IMAGE,
        runner,
        step: (n, f) => p.step(n, f),
      });
      mkdirSync(paths.root, { recursive: true });
      writeFileSync(paths.kubeconfig, c.kubeconfigYaml, { mode: 0o600 });
      record = { name: o.name, index: -1, backend: 'k3s', kubeconfig: paths.kubeconfig, context: c.context };
      break;
    }
    case 'existing':
      record = await existingUp(o, paths, p);
      break;
  }
  if (o.backend !== 'embedded') writeLabRecord(record!, o.home);
  const context = (record!.context as string) ?? `gwlab-${o.name}`;
  if (!o.noInstall) {
    const [{ Kube }, { installSystem }] = await loadInstall();
    const kube = Kube.fromFile(record!.kubeconfig, context);
    // Running lab:up again keeps the validation mode the lab was started with unless one is given.
    const validation = o.validation ?? (previous?.validation as Validation | undefined);
    await installSystem(kube, {
      validation,
      gatewayApiChannel: o.gatewayApiChannel,
      withSampleApp: o.withSampleApp,
      withExtAuth: o.withExtAuth,
      progress: p,
      alongside: clusterStarted,
      newCluster,
    });
    writeLabRecord({ ...readLabRecord(o.name, o.home)!, installed: true, validation: validation ?? 'strict' }, o.home);
  }
  await clusterStarted;
  if (o.mergeKubeconfig) await p.step('merge into ~/.kube/config', () => mergeKubeconfig(record!.kubeconfig));
  return { record: readLabRecord(o.name, o.home)!, kubeconfig: record!.kubeconfig, context, reused };
}

/** Merges the lab's cluster, user and context into ~/.kube/config (as kind does) without switching the current one. */
export async function mergeKubeconfig(
  labKubeconfig: string,
  target = process.env.KUBECONFIG?.split(':')[0] ?? join(homedir(), '.kube', 'config'),
): Promise<string> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const lab = new KubeConfig();
  lab.loadFromFile(labKubeconfig);
  const merged = new KubeConfig();
  if (existsSync(target)) merged.loadFromFile(target);
  const names = new Set(lab.getContexts().map((c) => c.name));
  const cleaned = {
    clusters: merged.getClusters().filter((c) => !lab.getClusters().some((l) => l.name === c.name)),
    users: merged.getUsers().filter((u) => !lab.getUsers().some((l) => l.name === u.name)),
    contexts: merged.getContexts().filter((c) => !names.has(c.name)),
  };
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: [...cleaned.clusters, ...lab.getClusters()],
    users: [...cleaned.users, ...lab.getUsers()],
    contexts: [...cleaned.contexts, ...lab.getContexts()],
    currentContext: merged.getCurrentContext() || lab.getCurrentContext(),
  });
  mkdirSync(join(target, '..'), { recursive: true });
  writeFileSync(target, out.exportConfig(), { mode: 0o600 });
  return target;
}

export interface DownOptions {
  name: string;
  home: string;
  progress: Progress;
  keepState?: boolean;
}

export async function labDown(o: DownOptions): Promise<{ found: boolean }> {
  const rec = readLabRecord(o.name, o.home);
  const paths = labPaths(o.name, o.home);
  if (!rec && !existsSync(paths.root)) return { found: false };
  const backend = rec?.backend ?? 'embedded';
  const backends = backend === 'kind' || backend === 'k3s' ? await loadBackends() : undefined;
  const runner = backends?.execaRunner(process.env, (l) => o.progress.info(l));
  switch (backend) {
    case 'embedded':
      await o.progress.step('stop the lab process and its pods', async () => {
        const r = await stopLabProcess(o.name, o.home);
        if (r.leftovers) o.progress.info(`killed ${r.leftovers} leftover pod process(es)`);
      });
      break;
    case 'kind':
      await o.progress.step(`kind delete cluster ${o.name}`, () => backends!.kindDown(o.name, runner!));
      break;
    case 'k3s':
      await o.progress.step(`remove k3s container`, () => backends!.k3sDown(o.name, runner!));
      break;
    case 'existing':
      await o.progress.step('remove what the lab installed (the cluster stays)', async () => {
        const [{ Kube }, { controlPlaneManifests, readManifest }] = await loadInstall();
        const kube = Kube.fromFile(rec!.kubeconfig, rec!.context as string);
        const docs = [
          ...readManifest('sampleapp.yaml'),
          ...readManifest('extauth.yaml'),
          ...readManifest('ratelimit.yaml'),
          ...readManifest('extproc.yaml'),
          ...controlPlaneManifests(),
        ];
        await kube.delete(
          docs.filter((d) => d.kind === 'Namespace' || d.kind === 'GatewayClass' || d.kind?.startsWith('Cluster')),
        );
      });
      break;
  }
  if (!o.keepState) rmSync(paths.root, { recursive: true, force: true });
  return { found: true };
}

export function readKubeconfigText(rec: LabRecord): string {
  return readFileSync(rec.kubeconfig, 'utf8');
}
