// Pod volumes on the embedded node: each is a folder `<pods>/<uid>/volumes/<name>` filled from the API (configMap,
// secret, projected service-account token / configMap / secret / downwardAPI, downwardAPI) or left empty
// (emptyDir); hostPath uses the host path itself. Containers see them at their mountPath through the pod runtime
// hook (runtime-config.ts mounts). The service-account volume that Kubernetes' admission adds to every pod
// (token, ca.crt, namespace at /var/run/secrets/kubernetes.io/serviceaccount) is provided by the kubelet here
// without changing the pod spec.
//
// Volumes from the API are written as the kubelet writes them, atomically (atomic-writer.ts: `..data` swapped by
// rename, user-visible names as symlinks into it). Projected volumes with a serviceAccountToken source are projected
// again whenever one of their tokens is due for a refresh (token-manager.ts: 80 % of its TTL, or 24 h), for as long as
// the pod runs (`PodVolumes.keepTokensFresh`), so a lab left running for days keeps working pods.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../../system/shared/log.ts';
import type { KubeClient } from '../../client/kube-client.ts';
import { KubeError } from '../../client/kube-client.ts';
import type { PodRuntimeMount } from '../runtime-hook/runtime-config.ts';
import { type FileProjection, writeAtomically } from './atomic-writer.ts';
import { sleep } from './time.ts';
import { type IssuedToken, TokenManager, type TokenSpec } from './token-manager.ts';

export const SA_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const SA_VOLUME = 'kube-api-access-gwlab';

export class VolumeError extends Error {}

interface Ctx {
  client: KubeClient;
  pod: any;
  caPem: string;
  tokens: TokenManager;
}

/** File contents by relative path: text (ConfigMap data, downward API) or bytes (Secret data, binaryData). */
type Files = Record<string, string | Buffer>;

/** The kubelet's default for a volume that sets no defaultMode (0644); Secret data and tokens are not hidden more. */
const DEFAULT_MODE = 0o644;
/** Token lifetime the kubelet asks for (kubelet's default for the service-account volume, 1 h + 7 s). */
export const SA_TOKEN_EXPIRATION_SECONDS = 3607;

function projection(files: Files, mode: number): Record<string, FileProjection> {
  return Object.fromEntries(Object.entries(files).map(([p, data]) => [p, { data, mode: mode & 0o777 }]));
}

function keyed(data: Files, items: { key: string; path: string }[] | undefined, what: string): Files {
  if (!items?.length) return { ...data };
  const out: Files = {};
  for (const it of items) {
    if (!(it.key in data)) throw new VolumeError(`${what}: key "${it.key}" not found`);
    out[it.path] = data[it.key];
  }
  return out;
}

// Secret data and ConfigMap binaryData are bytes: kept as Buffers and written as they are. (Going through a string
// would re-encode every byte >= 0x80 as UTF-8 on write.)
const b64 = (data: Record<string, string> = {}): Record<string, Buffer> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64')]));

async function configMapFiles(ctx: Ctx, src: any): Promise<Files> {
  const ns = ctx.pod.metadata.namespace;
  const cm = await ctx.client.getIfExists(`/api/v1/namespaces/${ns}/configmaps/${src.name}`);
  if (!cm) {
    if (src.optional) return {};
    throw new VolumeError(`configmap "${src.name}" not found`);
  }
  const data = { ...(cm.data ?? {}), ...b64(cm.binaryData) };
  return keyed(data, src.items, `configmap "${src.name}"`);
}

async function secretFiles(ctx: Ctx, src: any): Promise<Files> {
  const ns = ctx.pod.metadata.namespace;
  const name = src.secretName ?? src.name;
  const s = await ctx.client.getIfExists(`/api/v1/namespaces/${ns}/secrets/${name}`);
  if (!s) {
    if (src.optional) return {};
    throw new VolumeError(`secret "${name}" not found`);
  }
  return keyed(b64(s.data), src.items, `secret "${name}"`);
}

function downwardFiles(ctx: Ctx, items: any[], podIP: string): Record<string, string> {
  const out: Record<string, string> = {};
  const pod = ctx.pod;
  for (const it of items ?? []) {
    const f = it.fieldRef?.fieldPath as string | undefined;
    if (!f) continue;
    if (f === 'metadata.labels' || f === 'metadata.annotations') {
      const m = pod.metadata[f.split('.')[1]] ?? {};
      out[it.path] = Object.entries(m)
        .map(([k, v]) => `${k}="${String(v).replace(/"/g, '\\"')}"`)
        .join('\n');
      continue;
    }
    const map: Record<string, string> = {
      'metadata.name': pod.metadata.name,
      'metadata.namespace': pod.metadata.namespace,
      'metadata.uid': pod.metadata.uid,
      'spec.nodeName': pod.spec.nodeName ?? '',
      'spec.serviceAccountName': pod.spec.serviceAccountName ?? 'default',
      'status.podIP': podIP,
    };
    out[it.path] = map[f] ?? '';
  }
  return out;
}

/** A TokenRequest for the pod's service account, bound to the pod (the TokenManager's fetch). */
async function requestToken(client: KubeClient, pod: any, spec: TokenSpec): Promise<IssuedToken> {
  try {
    const tr = await client.request(
      'POST',
      `/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${spec.serviceAccount}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          ...(spec.audience ? { audiences: [spec.audience] } : {}),
          expirationSeconds: spec.expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
        },
      },
    );
    return {
      token: tr.status.token,
      expirationTimestamp: tr.status.expirationTimestamp,
      // The API server may have shortened it (--service-account-max-token-expiration): its answer counts.
      expirationSeconds: tr.spec?.expirationSeconds ?? spec.expirationSeconds,
    };
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) {
      throw new VolumeError(`serviceaccount "${spec.serviceAccount}" not found`);
    }
    throw err;
  }
}

function saToken(ctx: Ctx, src: { audience?: string; expirationSeconds?: number }): Promise<string> {
  return ctx.tokens.get({
    serviceAccount: ctx.pod.spec.serviceAccountName ?? 'default',
    audience: src.audience,
    expirationSeconds: src.expirationSeconds ?? SA_TOKEN_EXPIRATION_SECONDS,
  });
}

/** Whether the kubelet adds the service-account volume (automountServiceAccountToken, default true). */
export function wantsServiceAccountMount(pod: any): boolean {
  if (pod.spec.automountServiceAccountToken === false) return false;
  return !(pod.spec.volumes ?? []).some((v: any) => v.name === SA_VOLUME);
}

/** The implicit service-account volume (kube-api-access-*), as Kubernetes' admission writes it into pod specs. */
function serviceAccountVolume(): any {
  return {
    name: SA_VOLUME,
    projected: {
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: SA_TOKEN_EXPIRATION_SECONDS } },
        { caPem: true },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/** The files of a volume filled from the API, with their mode; undefined for emptyDir, hostPath and other types. */
async function volumeFiles(ctx: Ctx, v: any, podIP: string): Promise<Record<string, FileProjection> | undefined> {
  if (v.configMap) return projection(await configMapFiles(ctx, v.configMap), v.configMap.defaultMode ?? DEFAULT_MODE);
  if (v.secret) return projection(await secretFiles(ctx, v.secret), v.secret.defaultMode ?? DEFAULT_MODE);
  if (v.downwardAPI) return projection(downwardFiles(ctx, v.downwardAPI.items, podIP), DEFAULT_MODE);
  if (!v.projected) return undefined;
  const files: Files = {};
  for (const s of v.projected.sources ?? []) {
    if (s.serviceAccountToken) files[s.serviceAccountToken.path] = await saToken(ctx, s.serviceAccountToken);
    else if (s.caPem) files['ca.crt'] = ctx.caPem;
    else if (s.configMap) {
      // kube-root-ca.crt may not be published yet in a brand-new namespace: the kubelet knows the CA.
      if (s.configMap.name === 'kube-root-ca.crt') {
        Object.assign(files, keyed({ 'ca.crt': ctx.caPem }, s.configMap.items, 'configmap "kube-root-ca.crt"'));
      } else Object.assign(files, await configMapFiles(ctx, s.configMap));
    } else if (s.secret) Object.assign(files, await secretFiles(ctx, s.secret));
    else if (s.downwardAPI) Object.assign(files, downwardFiles(ctx, s.downwardAPI.items, podIP));
  }
  return projection(files, v.projected.defaultMode ?? DEFAULT_MODE);
}

const hasToken = (v: any) => (v.projected?.sources ?? []).some((s: any) => s.serviceAccountToken);

/** A pod's volumes: set up once before its containers start, then its tokens kept fresh while it runs. */
export class PodVolumes {
  /** Volume name → the folder its containers see (mounts). */
  dirs = new Map<string, string>();
  private readonly client: KubeClient;
  private readonly podDir: string;
  private readonly caPem: string;
  private readonly tokens: TokenManager;
  private withTokens: any[] = [];

  constructor(client: KubeClient, pod: any, podDir: string, caPem: string) {
    this.client = client;
    this.podDir = podDir;
    this.caPem = caPem;
    // The pod's uid and name never change: the bound object of its tokens is fixed.
    this.tokens = new TokenManager((spec) => requestToken(client, pod, spec));
  }

  private ctx(pod: any): Ctx {
    return { client: this.client, pod, caPem: this.caPem, tokens: this.tokens };
  }

  /** Fills every volume of the pod; throws VolumeError (FailedMount) when a source is missing. */
  async setUp(pod: any, podIP: string): Promise<void> {
    const ctx = this.ctx(pod);
    const dirs = new Map<string, string>();
    const vols: any[] = [...(pod.spec.volumes ?? [])];
    if (wantsServiceAccountMount(pod)) vols.push(serviceAccountVolume());
    for (const v of vols) {
      if (v.hostPath) {
        dirs.set(v.name, v.hostPath.path);
        continue;
      }
      const dir = join(this.podDir, 'volumes', v.name);
      const payload = v.emptyDir ? undefined : await volumeFiles(ctx, v, podIP);
      // A first set-up starts from nothing (a lab restart may have left an older copy).
      if (payload) rmSync(dir, { recursive: true, force: true });
      // emptyDir, and volume types the embedded node does not implement (persistentVolumeClaim, csi, ...): a folder.
      if (!payload) mkdirSync(dir, { recursive: true });
      else writeAtomically(dir, payload);
      dirs.set(v.name, dir);
    }
    this.dirs = dirs;
    this.withTokens = vols.filter(hasToken);
  }

  /**
   * Projects again every projected volume with a token (tokens not yet due come from the cache). Nothing is written
   * once `signal` aborted: the pod's folder may be gone by the time a TokenRequest answers.
   */
  async renewTokens(pod: any, podIP: string, signal?: AbortSignal): Promise<void> {
    const ctx = this.ctx(pod);
    for (const v of this.withTokens) {
      const payload = await volumeFiles(ctx, v, podIP);
      if (signal?.aborted) return;
      if (payload) writeAtomically(this.dirs.get(v.name)!, payload);
    }
  }

  /**
   * Renews the pod's tokens when they are due, until `signal` aborts (the pod stops). A failed refresh is reported
   * through `onError` and retried (1 s, doubling up to 30 s) while the old token keeps working.
   */
  async keepTokensFresh(
    signal: AbortSignal,
    current: () => { pod: any; podIP: string },
    onError: (message: string) => void,
    log?: Logger,
  ): Promise<void> {
    let failures = 0;
    while (!signal.aborted && this.withTokens.length) {
      const next = this.tokens.nextRefresh();
      if (next === undefined) return;
      // After a failure, retry soon even if the cached tokens are not due: the volume on disk may hold an old one.
      await sleep(failures ? Math.min(1000 * 2 ** (failures - 1), 30_000) : next - Date.now(), signal);
      if (signal.aborted) return;
      const { pod, podIP } = current();
      try {
        await this.renewTokens(pod, podIP, signal);
        const stale = this.tokens.failures.splice(0);
        if (stale.length) throw stale[0];
        failures = 0;
      } catch (err) {
        failures++;
        const msg = `MountVolume.SetUp failed: failed to refresh token: ${(err as Error).message ?? err}`;
        log?.warn('token refresh failed', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, err: err as Error });
        onError(msg);
      }
    }
  }
}

/** The mounts of one container: its volumeMounts (subPath included) plus the implicit service-account mount. */
export function containerMounts(pod: any, container: any, dirs: Map<string, string>): PodRuntimeMount[] {
  const mounts: PodRuntimeMount[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const dir = dirs.get(vm.name);
    if (!dir) continue;
    mounts.push({
      mountPath: vm.mountPath,
      hostPath: vm.subPath ? join(dir, vm.subPath) : dir,
      readOnly: !!vm.readOnly,
    });
  }
  if (
    dirs.has(SA_VOLUME) &&
    wantsServiceAccountMount(pod) &&
    !mounts.some((m) => m.mountPath.replace(/\/$/, '') === SA_MOUNT_PATH)
  ) {
    mounts.push({ mountPath: SA_MOUNT_PATH, hostPath: dirs.get(SA_VOLUME)!, readOnly: true });
  }
  return mounts;
}
