// Deployment → ReplicaSets, as kube-controller-manager's deployment controller: one ReplicaSet per pod template
// (name <deployment>-<pod-template-hash>), rolling updates within maxSurge/maxUnavailable or Recreate, the
// revision annotations, history cleanup (revisionHistoryLimit), and the status and conditions that
// `kubectl rollout status` reads (observedGeneration, updated/ready/available/unavailableReplicas, Available,
// Progressing).
import type { Logger } from '../../../system/shared/log.ts';
import { EventRecorder } from '../client/events.ts';
import { type KubeClient, KubeError } from '../client/kube-client.ts';
import { byUid, namespacedName } from '../client/list-watch.ts';
import { Controller } from './controller.ts';
import { canonicalJson, controllerOf, intOrPercent, rfc3339, templateHash } from './workload-util.ts';

const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
const HASH = 'pod-template-hash';

export class DeploymentController extends Controller {
  private readonly events: EventRecorder;
  private readonly deployments = this.informer('/apis/apps/v1/deployments', {
    onEvent: (_type, o) => o && this.queue.add(namespacedName(o)),
  });
  private readonly rs = this.informer('/apis/apps/v1/replicasets', {
    key: byUid,
    onEvent: (_type, o) => {
      const ref = o && controllerOf(o);
      if (ref?.kind === 'Deployment') this.queue.add(`${o.metadata.namespace}/${ref.name}`);
    },
  });

  constructor(client: KubeClient, log: Logger) {
    super(client, log, { what: 'deployment', field: 'deployment' });
    this.events = new EventRecorder(client, { component: 'deployment-controller' }, log);
  }

  private ownedRS(d: any): any[] {
    return [...this.rs.values()]
      .filter((r) => r.metadata.namespace === d.metadata.namespace && controllerOf(r)?.uid === d.metadata.uid)
      .filter((r) => !r.metadata.deletionTimestamp);
  }

  private record(d: any, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.events.record({ ...d, kind: 'Deployment', apiVersion: 'apps/v1' }, type, reason, message);
  }

  private async scale(d: any, rs: any, replicas: number): Promise<void> {
    const from = rs.spec.replicas ?? 0;
    if (from === replicas) return;
    const maxSurge = intOrPercent(d.spec.strategy?.rollingUpdate?.maxSurge ?? '25%', d.spec.replicas ?? 1, true);
    const updated = await this.client.request(
      'PATCH',
      `/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}`,
      {
        metadata: {
          annotations: {
            [DESIRED]: String(d.spec.replicas ?? 1),
            [MAX_REPLICAS]: String((d.spec.replicas ?? 1) + maxSurge),
          },
        },
        spec: { replicas },
      },
      'application/merge-patch+json',
    );
    this.rs.set(updated.metadata.uid, updated);
    this.record(
      d,
      'Normal',
      'ScalingReplicaSet',
      `Scaled ${replicas > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${replicas}`,
    );
  }

  protected async sync(key: string): Promise<void> {
    const d = this.deployments.get(key);
    if (!d || d.metadata.deletionTimestamp) return;
    const ns = d.metadata.namespace;
    const replicas = d.spec.replicas ?? 1;
    const { strategy, maxSurge, maxUnavailable } = rolloutLimits(d, replicas);
    const ensured = await this.ensureNewRS(key, d, replicas, maxSurge);
    if (!ensured) return;
    const { newRS, createdNew } = ensured;
    const old = this.ownedRS(d).filter((r) => r.metadata.uid !== newRS.metadata.uid);
    const revision = newRS.metadata.annotations?.[REVISION];
    if (d.metadata.annotations?.[REVISION] !== revision) {
      const patched = await this.client.request(
        'PATCH',
        `/apis/apps/v1/namespaces/${ns}/deployments/${d.metadata.name}`,
        { metadata: { annotations: { [REVISION]: revision } } },
        'application/merge-patch+json',
      );
      this.deployments.set(key, patched);
    }
    if (!d.spec.paused) {
      if (strategy === 'Recreate') {
        for (const r of old) await this.scale(d, r, 0);
        const oldPods = old.reduce((n, r) => n + (r.status?.replicas ?? 0), 0);
        if (oldPods === 0) await this.scale(d, newRS, replicas);
      } else {
        await this.rollingUpdate(d, newRS, old, replicas, maxSurge, maxUnavailable);
      }
      await this.cleanup(
        d,
        this.ownedRS(d).filter((r) => r.metadata.uid !== newRS.metadata.uid),
      );
    }
    await this.writeStatus(d, newRS, createdNew, maxUnavailable);
  }

  /**
   * The ReplicaSet of the current template (`<name>-<pod-template-hash>`), created (at the size maxSurge allows) if
   * missing, or brought back to the newest revision on a rollback. Undefined when a foreign ReplicaSet holds the name
   * (retried shortly).
   */
  private async ensureNewRS(
    key: string,
    d: any,
    replicas: number,
    maxSurge: number,
  ): Promise<{ newRS: any; createdNew: boolean } | undefined> {
    const ns = d.metadata.namespace;
    const template = structuredClone(d.spec.template ?? {});
    const hash = templateHash(template, d.status?.collisionCount ?? 0);
    const all = this.ownedRS(d);
    const found = all.find((r) => r.metadata.labels?.[HASH] === hash);
    const maxRevision = Math.max(0, ...all.map((r) => Number(r.metadata.annotations?.[REVISION] ?? 0)));
    if (found) {
      if (Number(found.metadata.annotations?.[REVISION] ?? 0) >= maxRevision)
        return { newRS: found, createdNew: false };
      // Rolled back to an older template: it becomes the newest revision.
      const newRS = await this.client.request(
        'PATCH',
        `/apis/apps/v1/namespaces/${ns}/replicasets/${found.metadata.name}`,
        { metadata: { annotations: { [REVISION]: String(maxRevision + 1) } } },
        'application/merge-patch+json',
      );
      this.rs.set(newRS.metadata.uid, newRS);
      return { newRS, createdNew: false };
    }
    const strategy = d.spec.strategy?.type ?? 'RollingUpdate';
    const labels = { ...(template.metadata?.labels ?? {}), [HASH]: hash };
    const selector = structuredClone(d.spec.selector ?? {});
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [HASH]: hash };
    const oldActive = all.reduce((n, r) => n + (r.spec.replicas ?? 0), 0);
    const initial = strategy === 'Recreate' ? 0 : Math.max(0, Math.min(replicas, replicas + maxSurge - oldActive));
    let newRS: any;
    try {
      newRS = await this.client.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${d.metadata.name}-${hash}`,
          namespace: ns,
          labels,
          annotations: {
            [REVISION]: String(maxRevision + 1),
            [DESIRED]: String(replicas),
            [MAX_REPLICAS]: String(replicas + maxSurge),
          },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: d.metadata.name,
              uid: d.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          replicas: initial,
          minReadySeconds: d.spec.minReadySeconds ?? 0,
          selector,
          template: { ...template, metadata: { ...(template.metadata ?? {}), labels } },
        },
      });
    } catch (err) {
      if (err instanceof KubeError && err.code === 409) {
        // A ReplicaSet of that name exists but is not ours (or not seen yet): retry after the watch catches up.
        this.queue.add(key, 200);
        return undefined;
      }
      throw err;
    }
    this.rs.set(newRS.metadata.uid, newRS);
    if (initial > 0)
      this.record(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${newRS.metadata.name} from 0 to ${initial}`,
      );
    return { newRS, createdNew: true };
  }

  /** One step of a rolling update: the new ReplicaSet up within maxSurge, old ones down within maxUnavailable. */
  private async rollingUpdate(
    d: any,
    newRS: any,
    old: any[],
    replicas: number,
    maxSurge: number,
    maxUnavailable: number,
  ): Promise<void> {
    // Scale up the new ReplicaSet within maxSurge.
    const total = [newRS, ...old].reduce((n, r) => n + (r.spec.replicas ?? 0), 0);
    const cur = newRS.spec.replicas ?? 0;
    if (cur > replicas) await this.scale(d, newRS, replicas);
    else if (cur < replicas) {
      const allowed = replicas + maxSurge - total;
      if (allowed > 0) await this.scale(d, newRS, Math.min(replicas, cur + allowed));
    }
    // Scale down old ReplicaSets within maxUnavailable (unhealthy ones first).
    const specTotal = [newRS, ...old].reduce((n, r) => n + (r.spec.replicas ?? 0), 0);
    const minAvailable = replicas - maxUnavailable;
    const newUnavailable = Math.max(0, (newRS.spec.replicas ?? 0) - (newRS.status?.availableReplicas ?? 0));
    let maxScaledDown = specTotal - minAvailable - newUnavailable;
    const oldest = [...old].sort(
      (a, b) => new Date(a.metadata.creationTimestamp).getTime() - new Date(b.metadata.creationTimestamp).getTime(),
    );
    for (const r of oldest) {
      if (maxScaledDown <= 0) break;
      const unhealthy = (r.spec.replicas ?? 0) - (r.status?.availableReplicas ?? 0);
      const n = Math.min(maxScaledDown, unhealthy);
      if (n > 0) {
        await this.scale(d, r, (r.spec.replicas ?? 0) - n);
        maxScaledDown -= n;
      }
    }
    const available = [newRS, ...old].reduce(
      (n, r) => n + Math.min(r.spec.replicas ?? 0, r.status?.availableReplicas ?? 0),
      0,
    );
    let canRemove = available - minAvailable;
    for (const r of oldest) {
      if (canRemove <= 0) break;
      const n = Math.min(canRemove, r.spec.replicas ?? 0);
      if (n > 0) {
        await this.scale(d, r, (r.spec.replicas ?? 0) - n);
        canRemove -= n;
      }
    }
  }

  private async cleanup(d: any, old: any[]): Promise<void> {
    const limit = d.spec.revisionHistoryLimit ?? 10;
    const idle = old
      .filter((r) => (r.spec.replicas ?? 0) === 0 && (r.status?.replicas ?? 0) === 0)
      .sort(
        (a, b) => Number(a.metadata.annotations?.[REVISION] ?? 0) - Number(b.metadata.annotations?.[REVISION] ?? 0),
      );
    for (const r of idle.slice(0, Math.max(0, idle.length - limit))) {
      try {
        await this.client.request(
          'DELETE',
          `/apis/apps/v1/namespaces/${r.metadata.namespace}/replicasets/${r.metadata.name}`,
        );
      } catch (err) {
        if (!(err instanceof KubeError && err.code === 404)) throw err;
      }
    }
  }

  private async writeStatus(d: any, newRS: any, createdNew: boolean, maxUnavailable: number): Promise<void> {
    const key = `${d.metadata.namespace}/${d.metadata.name}`;
    const cur = this.deployments.get(key) ?? d;
    const all = this.ownedRS(cur);
    const sum = (f: (r: any) => number) => all.reduce((n, r) => n + f(r), 0);
    const replicas = cur.spec.replicas ?? 1;
    const fresh = this.rs.get(newRS.metadata.uid) ?? newRS;
    const status: any = {
      observedGeneration: cur.metadata.generation,
      replicas: sum((r) => r.status?.replicas ?? 0),
      updatedReplicas: fresh.status?.replicas ?? 0,
      readyReplicas: sum((r) => r.status?.readyReplicas ?? 0),
      availableReplicas: sum((r) => r.status?.availableReplicas ?? 0),
    };
    status.unavailableReplicas = Math.max(0, replicas - status.availableReplicas);
    const prev = new Map<string, any>((cur.status?.conditions ?? []).map((c: any) => [c.type, c]));
    const now = rfc3339();
    const cond = (type: string, ok: boolean, reason: string, message: string) => {
      const p = prev.get(type);
      const s = ok ? 'True' : 'False';
      return {
        type,
        status: s,
        lastUpdateTime: p && p.status === s && p.reason === reason && p.message === message ? p.lastUpdateTime : now,
        lastTransitionTime: p && p.status === s ? p.lastTransitionTime : now,
        reason,
        message,
      };
    };
    const available = status.availableReplicas >= replicas - maxUnavailable;
    const complete =
      status.updatedReplicas === replicas &&
      status.replicas === replicas &&
      status.availableReplicas === replicas &&
      (fresh.status?.observedGeneration ?? 0) >= (fresh.metadata.generation ?? 0);
    const rsName = fresh.metadata.name;
    status.conditions = [
      cond(
        'Available',
        available,
        available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
        available ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
      ),
      complete
        ? cond('Progressing', true, 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`)
        : createdNew || !prev.has('Progressing')
          ? cond('Progressing', true, 'NewReplicaSetCreated', `Created new replica set "${rsName}"`)
          : cond('Progressing', true, 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
    ];
    if (cur.status?.collisionCount) status.collisionCount = cur.status.collisionCount;
    const strip = (s: any) =>
      canonicalJson({
        ...s,
        conditions: (s?.conditions ?? []).map((c: any) => ({ ...c, lastUpdateTime: 0, lastTransitionTime: 0 })),
      });
    if (strip(status) === strip(cur.status ?? {})) return;
    try {
      const updated = await this.client.request(
        'PATCH',
        `/apis/apps/v1/namespaces/${cur.metadata.namespace}/deployments/${cur.metadata.name}/status`,
        { status },
        'application/merge-patch+json',
      );
      this.deployments.set(key, updated);
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 404)) throw err;
    }
  }
}

/** The strategy and its limits: maxSurge and maxUnavailable of a RollingUpdate (25 % each by default), or Recreate. */
function rolloutLimits(d: any, replicas: number): { strategy: string; maxSurge: number; maxUnavailable: number } {
  const strategy = d.spec.strategy?.type ?? 'RollingUpdate';
  const maxSurge =
    strategy === 'RollingUpdate' ? intOrPercent(d.spec.strategy?.rollingUpdate?.maxSurge ?? '25%', replicas, true) : 0;
  let maxUnavailable =
    strategy === 'RollingUpdate'
      ? intOrPercent(d.spec.strategy?.rollingUpdate?.maxUnavailable ?? '25%', replicas, false)
      : replicas;
  if (strategy === 'RollingUpdate' && maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { strategy, maxSurge, maxUnavailable };
}
