// The developer loop: after an edit under system/, restart every workload that runs the system image so it runs the
// new code. The embedded node runs the repository's files directly, so a rolling restart is enough; on kind the image
// is rebuilt and loaded first.
import { PatchStrategy } from '@kubernetes/client-node';
import { SYSTEM_IMAGE } from '../system/image.ts';
import { execaRunner } from './backends/exec.ts';
import { kindLoadSystemImage } from './backends/kind.ts';
import { REPO_ROOT } from './install.ts';
import type { Progress } from './progress.ts';
import type { LabRecord } from './state.ts';
import type { KObj, Kube } from './toolkit/kube.ts';

export interface Rolled {
  namespace: string;
  name: string;
}

/** Deployments whose pod template runs the system image (the control plane, proxies, sample apps). */
export async function systemDeployments(kube: Kube, image = SYSTEM_IMAGE): Promise<KObj[]> {
  const all = await kube.list('apps/v1', 'Deployment');
  return all.filter((d) =>
    (d.spec?.template?.spec?.containers ?? []).some((c: { image?: string }) => c.image === image),
  );
}

export async function reloadSystem(kube: Kube, rec: LabRecord, progress: Progress): Promise<Rolled[]> {
  if (rec.backend === 'kind') {
    await kindLoadSystemImage({
      labName: rec.name,
      repoRoot: REPO_ROOT,
      image: SYSTEM_IMAGE,
      runner: execaRunner(process.env, (l) => progress.info(l)),
      step: (n, f) => progress.step(n, f),
    });
  } else if (rec.backend === 'k3s' || rec.backend === 'existing') {
    progress.info(`${rec.backend}: the image is not rebuilt here; pods restart on the image the cluster has`);
  }
  const deps = await systemDeployments(kube);
  const now = new Date().toISOString();
  const rolled: Rolled[] = [];
  await progress.step(`restart ${deps.length} deployment(s) running ${SYSTEM_IMAGE}`, async () => {
    for (const d of deps) {
      await kube.objects.patch(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: d.metadata!.name, namespace: d.metadata!.namespace },
          spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': now } } } },
        },
        undefined,
        undefined,
        'gwlab-reload',
        undefined,
        PatchStrategy.MergePatch,
      );
      rolled.push({ namespace: d.metadata!.namespace!, name: d.metadata!.name! });
    }
  });
  await progress.step('wait for the rollouts', () =>
    Promise.all(rolled.map((r) => kube.waitForRollout(r.name, r.namespace, { timeoutMs: 120_000 }))),
  );
  return rolled;
}
