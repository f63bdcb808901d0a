// Pod volumes on the embedded node: each is a folder `<pods>/<uid>/volumes/<name>` filled from the API (configMap,
// secret, projected service-account token / configMap / secret / downwardAPI, downwardAPI) or left empty
// (emptyDir); hostPath uses the host path itself. Containers see them at their mountPath through the pod runtime
// hook (runtime-config.ts mounts). The service-account volume that Kubernetes' admission adds to every pod
// (token, ca.crt, namespace at /var/run/secrets/kubernetes.io/serviceaccount) is provided by the kubelet here
// without changing the pod spec.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KubeClient } from '../controllers/kube.ts';
import { KubeError } from '../controllers/kube.ts';
import type { PodRuntimeMount } from './runtime-config.ts';

export const SA_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const SA_VOLUME = 'kube-api-access-gwlab';

export class VolumeError extends Error {}

interface Ctx {
  client: KubeClient;
  pod: any;
  caPem: string;
}

/** File contents by relative path: text (ConfigMap data, downward API) or bytes (Secret data, binaryData). */
type Files = Record<string, string | Buffer>;

function writeFiles(dir: string, files: Files, mode = 0o644): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    chmodSync(p, mode & 0o777);
  }
}

async function getObj(client: KubeClient, path: string): Promise<any | undefined> {
  try {
    return await client.request('GET', path);
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
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
  const cm = await getObj(ctx.client, `/api/v1/namespaces/${ns}/configmaps/${src.name}`);
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
  const s = await getObj(ctx.client, `/api/v1/namespaces/${ns}/secrets/${name}`);
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

async function saToken(ctx: Ctx, src: { audience?: string; expirationSeconds?: number }): Promise<string> {
  const pod = ctx.pod;
  const sa = pod.spec.serviceAccountName ?? 'default';
  try {
    const tr = await ctx.client.request(
      'POST',
      `/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${sa}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          ...(src.audience ? { audiences: [src.audience] } : {}),
          expirationSeconds: src.expirationSeconds ?? 3607,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
        },
      },
    );
    return tr.status.token;
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) throw new VolumeError(`serviceaccount "${sa}" not found`);
    throw err;
  }
}

/** Whether the kubelet adds the service-account volume (automountServiceAccountToken, default true). */
export function wantsServiceAccountMount(pod: any): boolean {
  if (pod.spec.automountServiceAccountToken === false) return false;
  return !(pod.spec.volumes ?? []).some((v: any) => v.name === SA_VOLUME);
}

/** Fills every volume of the pod; throws VolumeError (FailedMount) when a source is missing. */
export async function prepareVolumes(
  client: KubeClient,
  pod: any,
  podDir: string,
  podIP: string,
  caPem: string,
): Promise<Map<string, string>> {
  const ctx: Ctx = { client, pod, caPem };
  const dirs = new Map<string, string>();
  const vols: any[] = [...(pod.spec.volumes ?? [])];
  if (wantsServiceAccountMount(pod)) {
    vols.push({
      name: SA_VOLUME,
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { caPem: true },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    });
  }
  for (const v of vols) {
    if (v.hostPath) {
      dirs.set(v.name, v.hostPath.path);
      continue;
    }
    const dir = join(podDir, 'volumes', v.name);
    let files: Files = {};
    let mode = 0o644;
    if (v.emptyDir) {
      mkdirSync(dir, { recursive: true });
      dirs.set(v.name, dir);
      continue;
    }
    if (v.configMap) {
      files = await configMapFiles(ctx, v.configMap);
      mode = v.configMap.defaultMode ?? 0o644;
    } else if (v.secret) {
      files = await secretFiles(ctx, v.secret);
      mode = v.secret.defaultMode ?? 0o644;
    } else if (v.downwardAPI) {
      files = downwardFiles(ctx, v.downwardAPI.items, podIP);
    } else if (v.projected) {
      mode = v.projected.defaultMode ?? 0o644;
      for (const s of v.projected.sources ?? []) {
        if (s.serviceAccountToken) files[s.serviceAccountToken.path] = await saToken(ctx, s.serviceAccountToken);
        else if (s.caPem) files['ca.crt'] = caPem;
        else if (s.configMap) {
          // kube-root-ca.crt may not be published yet in a brand-new namespace: the kubelet knows the CA.
          if (s.configMap.name === 'kube-root-ca.crt') {
            Object.assign(files, keyed({ 'ca.crt': caPem }, s.configMap.items, 'configmap "kube-root-ca.crt"'));
          } else Object.assign(files, await configMapFiles(ctx, s.configMap));
        } else if (s.secret) Object.assign(files, await secretFiles(ctx, s.secret));
        else if (s.downwardAPI) Object.assign(files, downwardFiles(ctx, s.downwardAPI.items, podIP));
      }
    } else {
      // Volume types the embedded node does not implement (persistentVolumeClaim, csi, ...) are empty folders.
      mkdirSync(dir, { recursive: true });
      dirs.set(v.name, dir);
      continue;
    }
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFiles(dir, files, mode);
    dirs.set(v.name, dir);
  }
  return dirs;
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
