// The install step, the same on every backend: the Gateway API CRDs (the vendored upstream bundle, verbatim, by
// server-side apply as a user applies it, when the cluster has none; a cluster's own kept, never downgraded:
// gateway-api-crds.ts decides, before anything is changed), gwlab's own CRDs, the control plane, optionally the sample
// application, then a wait for the control plane to be rolled out. The three install steps run side by side, each
// applying its documents at once, so that the control plane's pod starts while the CRDs are applied: loading its
// modules takes longer (~1.2 s against ~0.6 s for the CRDs on a loaded machine), and should its informers still find a
// CRD missing they list it again 0.5 s later (kube/informers.ts). Only its GatewayClass waits, for the Gateway API
// CRDs. The manifests are parsed once per process (lab:up parses them while the lab process starts); the Gateway API
// bundle is read from its JSON form (system/manifests/gateway-api.ts).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleFile,
  type GatewayApiChannel,
  MINIMUM_BUNDLE_VERSION,
  NEEDED_KINDS,
  VENDORED_BUNDLE_VERSION,
} from '../system/manifests/gateway-api.ts';
import { type CrdDecision, decideGatewayApiCrds } from './gateway-api-crds.ts';
import { type Progress, StepFailed } from './progress.ts';
import { type KObj, type Kube, parseYamlDocs } from './toolkit/kube.ts';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const MANIFESTS = join(REPO_ROOT, 'system', 'manifests');
export const SYSTEM_NAMESPACE = 'gwvendor-system';
export const CONTROL_PLANE = 'gwvendor';
/** The kind the Gateway API bundles' admission documents need the cluster to serve (Kubernetes 1.30+). */
const ADMISSION_API = 'admissionregistration.k8s.io/v1';

export type Validation = 'strict' | 'off';

export interface InstallOptions {
  validation?: Validation;
  withSampleApp?: boolean;
  withExtAuth?: boolean;
  /** Log level of the control plane's components (its --log-level). */
  controlPlaneLogLevel?: string;
  /** The Gateway API channel installed on a cluster that has none (default standard). */
  gatewayApiChannel?: GatewayApiChannel;
  progress: Progress;
  /** A step that runs beside the first three, awaited before the waits (lab:up: the lab process finishing its start). */
  alongside?: Promise<unknown>;
  /**
   * The cluster was created empty by this lab:up (a new embedded lab): it has no CRDs to read, and the install does
   * not wait for a round trip to learn so (~0.2 s of lab:up, while the lab process is still starting).
   */
  newCluster?: boolean;
}

const parsed = new Map<string, KObj[]>();

/** A manifest's documents (YAML, or a JSON array), parsed on first use; each call returns its own copy. */
export function readManifest(rel: string): KObj[] {
  let docs = parsed.get(rel);
  if (!docs) {
    const text = readFileSync(join(MANIFESTS, rel), 'utf8');
    docs = rel.endsWith('.json') ? (JSON.parse(text) as KObj[]) : parseYamlDocs(text);
    parsed.set(rel, docs);
  }
  return structuredClone(docs);
}

/** The vendored Gateway API bundle of a channel, its documents in the bundle's order. */
export function gatewayApiBundle(channel: GatewayApiChannel = 'standard'): KObj[] {
  return readManifest(bundleFile(channel, 'json'));
}

/** Parses what installSystem applies ahead of it (lab:up: while the lab process starts). */
export function preloadManifests(channel: GatewayApiChannel = 'standard'): void {
  for (const f of [bundleFile(channel, 'json'), 'crds/gwvendor.yaml', 'install/gwvendor.yaml']) readManifest(f);
}

/** Applies the documents side by side (each CRD waited on until Established). */
async function applyAll(kube: Kube, docs: KObj[], opts: { force?: boolean } = {}): Promise<void> {
  await Promise.all(docs.map((d) => kube.apply(d, opts)));
}

/**
 * The lab's GatewayParameters, which the GatewayClass names (spec.parametersRef): a stdout access log in Envoy's
 * default format on every Gateway of the class that no ListenerPolicy gives one, so `kubectl logs` of a proxy shows
 * a line per request (a Gateway's own GatewayParameters can turn it off: defaultAccessLog.enabled false).
 */
export const LAB_GATEWAY_PARAMETERS = 'gwvendor-lab';

function labGatewayParameters(): KObj {
  return {
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'GatewayParameters',
    metadata: {
      name: LAB_GATEWAY_PARAMETERS,
      namespace: SYSTEM_NAMESPACE,
      labels: { 'app.orch.io/part-of': 'gwvendor' },
    },
    spec: { defaultAccessLog: { enabled: true } },
  };
}

/**
 * The control plane's install documents with the lab's settings applied (validation switch, log level) and the lab's
 * GatewayParameters (default access log) named by the GatewayClass.
 */
export function controlPlaneManifests(opts: Pick<InstallOptions, 'validation' | 'controlPlaneLogLevel'> = {}): KObj[] {
  const docs = readManifest('install/gwvendor.yaml');
  const cls = docs.findIndex((d) => d.kind === 'GatewayClass');
  docs[cls]!.spec.parametersRef = {
    group: 'gateway.gwvendor.dev',
    kind: 'GatewayParameters',
    name: LAB_GATEWAY_PARAMETERS,
    namespace: SYSTEM_NAMESPACE,
  };
  docs.splice(cls, 0, labGatewayParameters());
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

/**
 * Reads the cluster's Gateway API CRDs (those the vendored bundles name, by name: no list of every CRD of a large
 * cluster) and decides what to do with them (gateway-api-crds.ts); changes nothing. A new cluster has none.
 */
export async function decideCrds(
  kube: Kube,
  channel: GatewayApiChannel = 'standard',
  newCluster = false,
): Promise<CrdDecision> {
  const names = gatewayApiBundle(channel)
    .filter((d) => d.kind === 'CustomResourceDefinition' && d.spec?.group === 'gateway.networking.k8s.io')
    .map((d) => d.metadata!.name!);
  const found = newCluster ? [] : await Promise.all(names.map((n) => kube.getCrd(n)));
  return decideGatewayApiCrds({
    installed: found.filter((c) => c !== undefined),
    channel,
    vendored: VENDORED_BUNDLE_VERSION,
    minimum: MINIMUM_BUNDLE_VERSION,
    needed: NEEDED_KINDS,
  });
}

/**
 * Applies a vendored bundle as `kubectl apply --server-side -f <bundle>` does: every document unchanged, no forced
 * conflicts. Its ValidatingAdmissionPolicy and Binding only on a cluster that serves them (Kubernetes 1.30+).
 */
async function installBundle(
  kube: Kube,
  channel: GatewayApiChannel,
  p: Progress,
  admissionServed: Promise<boolean>,
): Promise<void> {
  const docs = gatewayApiBundle(channel);
  const admission = docs.filter((d) => d.apiVersion === ADMISSION_API);
  const served = admission.length > 0 && (await admissionServed);
  if (admission.length && !served) {
    p.info(
      `the cluster does not serve ${ADMISSION_API} ValidatingAdmissionPolicy: skipping the bundle's ` +
        admission.map((d) => `${d.kind} ${d.metadata?.name}`).join(' and '),
    );
  }
  await applyAll(
    kube,
    docs.filter((d) => served || d.apiVersion !== ADMISSION_API),
    { force: false },
  );
}

export async function installSystem(kube: Kube, opts: InstallOptions): Promise<void> {
  const p = opts.progress;
  const channel = opts.gatewayApiChannel ?? 'standard';
  // Read-only, so asked beside the CRDs' read rather than after it: whether the bundle's admission documents can go in.
  const admissionServed = kube.serves(ADMISSION_API, 'ValidatingAdmissionPolicy');
  admissionServed.catch(() => {}); // awaited only when the bundle is installed
  // Decided before anything is changed: on a cluster whose Gateway API is too old, lab:up stops here.
  const checking = 'Gateway API CRDs on the cluster';
  const decision = await p.step(checking, async () => {
    const d = await decideCrds(kube, channel, opts.newCluster);
    if (d.action === 'stop') throw new StepFailed(checking, new Error(d.message), d.hint);
    p.info(opts.newCluster ? `${d.message} (a new cluster)` : d.message);
    if (d.action === 'keep') for (const n of d.notes) p.info(n);
    return d;
  });
  const gatewayApiCrds =
    decision.action === 'install'
      ? p.step(`Gateway API ${VENDORED_BUNDLE_VERSION} CRDs (${channel} channel)`, () =>
          installBundle(kube, channel, p, admissionServed),
        )
      : Promise.resolve();
  const vendorCrds = p.step(
    'gwvendor CRDs (GatewayParameters, TrafficPolicy, GatewayExtension, ListenerPolicy, BackendConfigPolicy)',
    () => applyAll(kube, readManifest('crds/gwvendor.yaml')),
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
        docs.filter((d) => !['Namespace', 'Deployment', 'GatewayClass', 'GatewayParameters'].includes(d.kind!)),
      );
      await applyAll(kube, of('Deployment'));
      await Promise.all([gatewayApiCrds, vendorCrds]);
      await applyAll(kube, of('GatewayParameters', 'GatewayClass'));
    },
  );
  await Promise.all([gatewayApiCrds, vendorCrds, controlPlane, opts.alongside]);
  if (opts.withSampleApp)
    await p.step('sample application (namespace sampleapp)', () => kube.apply(readManifest('sampleapp.yaml')));
  if (opts.withExtAuth) {
    await p.step('ext-auth sample (namespace extauth)', () => kube.apply(readManifest('extauth.yaml')));
    await p.step('rate-limit sample (namespace ratelimit)', () => kube.apply(readManifest('ratelimit.yaml')));
    await p.step('ext-proc sample (namespace extproc)', () => kube.apply(readManifest('extproc.yaml')));
  }
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
