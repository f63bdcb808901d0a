// The install step, the same on every backend: CRDs (the cluster's own Gateway API CRDs are kept when it has them),
// the control plane, optionally the sample application, then a wait for the control plane to be rolled out. The
// three first steps run side by side, each applying its documents at once, so that the control plane's pod starts
// while the CRDs are applied: loading its modules takes longer (~1.2 s against ~0.6 s for the CRDs on a loaded
// machine), and should its informers still find a CRD missing they list it again 0.5 s later (kube/informers.ts).
// Only its GatewayClass waits, for the Gateway API CRDs. The manifests are parsed once per process (lab:up parses
// them while the lab process starts).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Progress } from './progress.ts';
import { type KObj, type Kube, parseYamlDocs } from './toolkit/kube.ts';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const MANIFESTS = join(REPO_ROOT, 'system', 'manifests');
export const SYSTEM_NAMESPACE = 'gwvendor-system';
export const CONTROL_PLANE = 'gwvendor';
/** Marks the Gateway API CRDs that gwlab ships (so a cluster's own are told apart and kept). */
const OUR_CRD_ANNOTATION = 'gateway.gwvendor.dev/subset';

export type Validation = 'strict' | 'off';

export interface InstallOptions {
  validation?: Validation;
  withSampleApp?: boolean;
  withExtAuth?: boolean;
  /** Log level of the control plane's components (its --log-level). */
  controlPlaneLogLevel?: string;
  progress: Progress;
  /** A step that runs beside the first three, awaited before the waits (lab:up: the lab process finishing its start). */
  alongside?: Promise<unknown>;
}

const parsed = new Map<string, KObj[]>();

/** A manifest's documents, parsed on first use; each call returns its own copy (callers change them). */
export function readManifest(rel: string): KObj[] {
  let docs = parsed.get(rel);
  if (!docs) {
    docs = parseYamlDocs(readFileSync(join(MANIFESTS, rel), 'utf8'));
    parsed.set(rel, docs);
  }
  return structuredClone(docs);
}

/** Parses what installSystem applies ahead of it (lab:up: while the lab process starts). */
export function preloadManifests(): void {
  for (const f of ['crds/gateway-api.yaml', 'crds/gwvendor.yaml', 'install/gwvendor.yaml']) readManifest(f);
}

/** Applies the documents side by side (each CRD waited on until Established). */
async function applyAll(kube: Kube, docs: KObj[]): Promise<void> {
  await Promise.all(docs.map((d) => kube.apply(d)));
}

/** The control plane's install documents with the lab's settings applied (validation switch, log level). */
export function controlPlaneManifests(opts: Pick<InstallOptions, 'validation' | 'controlPlaneLogLevel'> = {}): KObj[] {
  const docs = readManifest('install/gwvendor.yaml');
  for (const d of docs) {
    if (d.kind !== 'Deployment' || d.metadata?.name !== CONTROL_PLANE) continue;
    const c = d.spec.template.spec.containers[0];
    if (opts.validation) {
      c.env ??= [];
      const env = c.env;
      const v = env.find((e: { name: string }) => e.name === 'GWVENDOR_XDS_VALIDATION');
      if (v) v.value = opts.validation;
      else env.push({ name: 'GWVENDOR_XDS_VALIDATION', value: opts.validation });
    }
    if (opts.controlPlaneLogLevel) {
      c.args = (c.args as string[]).map((a) =>
        a.startsWith('--log-level=') ? `--log-level=${opts.controlPlaneLogLevel}` : a,
      );
    }
  }
  return docs;
}

/** Whether the cluster has Gateway API CRDs that gwlab did not install (they are then kept as they are). */
export async function hasForeignGatewayApiCrds(kube: Kube): Promise<boolean> {
  const crd = await kube.get(
    'apiextensions.k8s.io/v1',
    'CustomResourceDefinition',
    'gateways.gateway.networking.k8s.io',
  );
  return !!crd && !crd.metadata?.annotations?.[OUR_CRD_ANNOTATION];
}

export async function installSystem(kube: Kube, opts: InstallOptions): Promise<void> {
  const p = opts.progress;
  const gatewayApiCrds = p.step('Gateway API CRDs', async () => {
    if (await hasForeignGatewayApiCrds(kube)) {
      p.info('the cluster has its own Gateway API CRDs: keeping them');
      return;
    }
    await applyAll(kube, readManifest('crds/gateway-api.yaml'));
  });
  const vendorCrds = p.step('gwvendor CRDs (GatewayParameters, TrafficPolicy, GatewayExtension)', () =>
    applyAll(kube, readManifest('crds/gwvendor.yaml')),
  );
  const controlPlane = p.step(
    `control plane (${SYSTEM_NAMESPACE}/${CONTROL_PLANE}, validation ${opts.validation ?? 'strict'})`,
    async () => {
      const docs = controlPlaneManifests(opts);
      const of = (...kinds: string[]) => docs.filter((d) => kinds.includes(d.kind!));
      await applyAll(kube, of('Namespace'));
      // Its ServiceAccount and RBAC before its pod (which would be refused, or denied its lists, without them).
      await applyAll(
        kube,
        docs.filter((d) => !['Namespace', 'Deployment', 'GatewayClass'].includes(d.kind!)),
      );
      await applyAll(kube, of('Deployment'));
      await gatewayApiCrds;
      await applyAll(kube, of('GatewayClass'));
    },
  );
  await Promise.all([gatewayApiCrds, vendorCrds, controlPlane, opts.alongside]);
  if (opts.withSampleApp)
    await p.step('sample application (namespace sampleapp)', () => kube.apply(readManifest('sampleapp.yaml')));
  if (opts.withExtAuth)
    await p.step('ext-auth sample (namespace extauth)', () => kube.apply(readManifest('extauth.yaml')));
  await p.step(
    'control plane Ready',
    () => kube.waitForRollout(CONTROL_PLANE, SYSTEM_NAMESPACE, { timeoutMs: 120_000, intervalMs: 100 }),
    {
      hint: `kubectl -n ${SYSTEM_NAMESPACE} describe pod -l app.orch.io/name=${CONTROL_PLANE}; kubectl -n ${SYSTEM_NAMESPACE} logs deploy/${CONTROL_PLANE}`,
    },
  );
  if (opts.withSampleApp) {
    await p.step(
      'sample application Ready',
      () => kube.waitForRollout('sampleapp', 'sampleapp', { timeoutMs: 120_000 }),
      {
        hint: 'kubectl -n sampleapp describe pod -l app=sampleapp',
      },
    );
  }
}
