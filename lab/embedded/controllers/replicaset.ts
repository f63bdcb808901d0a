// ReplicaSet → Pods: keeps spec.replicas active pods owned by each ReplicaSet (creating from the template, deleting
// the least valuable first: unscheduled, pending, not ready, newest), and writes the status counters
// (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration).

import type { KObject } from '../../../system/shared/kobject.ts';
import type { Logger } from '../../../system/shared/log.ts';
import { matchesLabelSelector } from '../../../system/shared/selectors.ts';
import { EventRecorder } from '../client/events.ts';
import { type KubeClient, KubeError } from '../client/kube-client.ts';
import { byUid, namespacedName } from '../client/list-watch.ts';
import { Controller } from './controller.ts';
import { controllerOf, isPodActive, isPodAvailable, isPodReady } from './workload-util.ts';

export class ReplicaSetController extends Controller {
  private readonly events: EventRecorder;
  private readonly rs = this.informer('/apis/apps/v1/replicasets', {
    onEvent: (_type, o) => o && this.queue.add(namespacedName(o)),
  });
  private readonly pods = this.informer('/api/v1/pods', {
    key: byUid,
    onEvent: (_type, o) => o && this.enqueueOwner(o),
  });

  constructor(client: KubeClient, log: Logger) {
    super(client, log, { what: 'replicaset', field: 'replicaset' });
    this.events = new EventRecorder(client, { component: 'replicaset-controller' }, log);
  }

  private enqueueOwner(pod: KObject): void {
    const ref = controllerOf(pod);
    if (ref?.kind === 'ReplicaSet') this.queue.add(`${pod.metadata.namespace}/${ref.name}`);
  }

  private owned(rs: any): any[] {
    return [...this.pods.values()].filter(
      (p) => p.metadata.namespace === rs.metadata.namespace && controllerOf(p)?.uid === rs.metadata.uid,
    );
  }

  protected async sync(key: string): Promise<void> {
    const rs = this.rs.get(key);
    if (!rs || rs.metadata.deletionTimestamp) return;
    const ns = rs.metadata.namespace;
    const active = this.owned(rs).filter(isPodActive);
    const want = rs.spec.replicas ?? 1;
    const diff = want - active.length;
    if (diff > 0) {
      const tpl = rs.spec.template ?? {};
      await Promise.all(
        Array.from({ length: diff }, async () => {
          const created = await this.client.request('POST', `/api/v1/namespaces/${ns}/pods`, {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: {
              generateName: `${rs.metadata.name}-`,
              namespace: ns,
              labels: tpl.metadata?.labels,
              annotations: tpl.metadata?.annotations,
              ownerReferences: [
                {
                  apiVersion: 'apps/v1',
                  kind: 'ReplicaSet',
                  name: rs.metadata.name,
                  uid: rs.metadata.uid,
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            },
            spec: tpl.spec,
          });
          // Seen at once, so the next sync does not create it again before the watch delivers it.
          this.pods.set(created.metadata.uid, created);
          void this.events.record(
            { ...rs, kind: 'ReplicaSet', apiVersion: 'apps/v1' },
            'Normal',
            'SuccessfulCreate',
            `Created pod: ${created.metadata.name}`,
          );
        }),
      );
    } else if (diff < 0) {
      const rank = (p: any) => [
        p.spec?.nodeName ? 1 : 0,
        p.status?.phase === 'Running' ? 1 : 0,
        isPodReady(p) ? 1 : 0,
        -new Date(p.metadata.creationTimestamp ?? 0).getTime(),
      ];
      const victims = [...active]
        .sort((a, b) => {
          const ra = rank(a);
          const rb = rank(b);
          for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i] - rb[i];
          return 0;
        })
        .slice(0, -diff);
      await Promise.all(
        victims.map(async (p) => {
          try {
            const res = await this.client.request('DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`);
            if (res?.metadata?.uid === p.metadata.uid) this.pods.set(p.metadata.uid, res);
            else
              this.pods.set(p.metadata.uid, {
                ...p,
                metadata: { ...p.metadata, deletionTimestamp: new Date().toISOString() },
              });
          } catch (err) {
            if (!(err instanceof KubeError && err.code === 404)) throw err;
            this.pods.delete(p.metadata.uid);
          }
          void this.events.record(
            { ...rs, kind: 'ReplicaSet', apiVersion: 'apps/v1' },
            'Normal',
            'SuccessfulDelete',
            `Deleted pod: ${p.metadata.name}`,
          );
        }),
      );
    }
    await this.writeStatus(rs);
  }

  private async writeStatus(rs: any): Promise<void> {
    const pods = this.owned(rs).filter(isPodActive);
    const minReady = rs.spec.minReadySeconds ?? 0;
    const status = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.filter((p) => matchesLabelSelector(p.metadata.labels, rs.spec.selector)).length,
      readyReplicas: pods.filter(isPodReady).length,
      availableReplicas: pods.filter((p) => isPodAvailable(p, minReady)).length,
      observedGeneration: rs.metadata.generation,
    };
    if (minReady && status.readyReplicas > status.availableReplicas) {
      this.queue.add(`${rs.metadata.namespace}/${rs.metadata.name}`, 1000);
    }
    const cur = rs.status ?? {};
    const same = Object.entries(status).every(([k, v]) => (cur[k] ?? 0) === (v ?? 0));
    if (same) return;
    try {
      const updated = await this.client.request(
        'PATCH',
        `/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}/status`,
        { status },
        'application/merge-patch+json',
      );
      this.rs.set(`${rs.metadata.namespace}/${rs.metadata.name}`, updated);
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 404)) throw err;
    }
  }
}
