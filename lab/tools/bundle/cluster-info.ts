// What a bug report needs to know about the cluster itself: the server version, the nodes, the CRDs of the gateway
// API groups with their served versions, and the lab record when the bundle was made from a lab (never a credential).
import { VersionApi } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { LabRecord } from '../../state.ts';
import type { KObj } from '../../toolkit/kube.ts';
import type { Collector } from '../collect/types.ts';

export const GATEWAY_GROUPS = ['gateway.networking.k8s.io', 'gateway.networking.x-k8s.io', 'gateway.gwvendor.dev'];

/** A copy without any key that names a credential, at any depth. */
export function withoutCredentials<T>(v: T): T {
  if (Array.isArray(v)) return v.map(withoutCredentials) as T;
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !/token|password|secret|credential|private/i.test(k))
      .map(([k, x]) => [k, withoutCredentials(x)]),
  ) as T;
}

export function crdSummary(crd: KObj): Record<string, unknown> {
  return {
    name: crd.metadata?.name,
    group: crd.spec?.group,
    kind: crd.spec?.names?.kind,
    scope: crd.spec?.scope,
    versions: (crd.spec?.versions ?? []).map((v: { name: string; served: boolean; storage: boolean }) => ({
      name: v.name,
      served: v.served,
      storage: v.storage,
    })),
    annotations: crd.metadata?.annotations ?? {},
    established:
      (crd.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Established')?.status ?? 'Unknown',
  };
}

export function clusterInfoCollector(rec?: LabRecord): Collector {
  return {
    name: 'cluster',
    what: 'server version (/version), nodes (ready, versions), CRDs of the gateway API groups with served versions, the lab record',
    async run({ kube }, out) {
      const notes: string[] = [];
      const errors: string[] = [];
      const part = async (what: string, fn: () => Promise<void>) => {
        try {
          await fn();
        } catch (err) {
          errors.push(`${what}: ${(err as Error).message}`);
        }
      };
      await Promise.all([
        part('server version', async () => {
          const v = await kube.kc.makeApiClient(VersionApi).getCode();
          await out.write('cluster/version.json', `${JSON.stringify(v, null, 2)}\n`);
          notes.push(`server ${v.gitVersion}`);
        }),
        part('nodes', async () => {
          const nodes = (await kube.core.listNode()).items.map((n) => ({
            name: n.metadata?.name,
            ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown',
            kubelet: n.status?.nodeInfo?.kubeletVersion,
            containerRuntime: n.status?.nodeInfo?.containerRuntimeVersion,
            os: n.status?.nodeInfo?.osImage,
            kernel: n.status?.nodeInfo?.kernelVersion,
            architecture: n.status?.nodeInfo?.architecture,
          }));
          await out.write('cluster/nodes.yaml', stringify(nodes, { lineWidth: 0 }));
          notes.push(`${nodes.length} nodes`);
        }),
        part('CRDs', async () => {
          const crds = (await kube.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition'))
            .filter((c) => GATEWAY_GROUPS.includes(c.spec?.group))
            .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
          await out.write('cluster/crds.yaml', stringify(crds.map(crdSummary), { lineWidth: 0 }));
          notes.push(`${crds.length} CRDs of the gateway groups`);
        }),
      ]);
      if (rec) await out.write('cluster/lab.json', `${JSON.stringify(withoutCredentials(rec), null, 2)}\n`);
      else notes.push('no lab record (the bundle was made from --kubeconfig)');
      return { notes, errors };
    },
  };
}
