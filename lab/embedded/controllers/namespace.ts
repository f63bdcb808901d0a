// Namespace deletion: a namespace being deleted (deletionTimestamp, spec.finalizers ["kubernetes"]) has every
// namespaced object in it deleted; once none is left the controller removes its `kubernetes` finalizer through
// /finalize, and the API server removes the namespace.

import type { KObject } from '../../../system/shared/kobject.ts';
import { ListWatch } from '../../../system/shared/kube/list-watch.ts';
import type { Logger } from '../../../system/shared/log.ts';
import { type ApiResource, collectionPath, type KubeClient, KubeError } from '../client/kube-client.ts';

export class NamespaceController {
  private readonly client: KubeClient;
  private readonly log: Logger;
  private watch?: ListWatch;
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private running = false;
  private stopped = false;

  constructor(client: KubeClient, log: Logger) {
    this.client = client;
    this.log = log;
  }

  start(): void {
    this.watch = new ListWatch(
      this.client,
      '/api/v1/namespaces',
      (type, ns) => {
        if (ns && type !== 'DELETED' && ns.metadata.deletionTimestamp) this.enqueue(ns.metadata.name);
      },
      this.log,
    );
    this.watch.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    if (this.timer) clearTimeout(this.timer);
  }

  private enqueue(name: string, delayMs = 0): void {
    this.pending.add(name);
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, delayMs);
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const name of [...this.pending]) {
        this.pending.delete(name);
        if (this.stopped) return;
        let done = false;
        try {
          done = await this.finalize(name);
        } catch (e) {
          this.log.warn('namespace cleanup failed; retrying', { namespace: name, err: e as Error });
        }
        if (!done) this.enqueue(name, 500);
      }
    } finally {
      this.running = false;
    }
  }

  /** Deletes what is in the namespace; true when it is empty and the finalizer has been removed. */
  private async finalize(name: string): Promise<boolean> {
    let ns: KObject;
    try {
      ns = await this.client.request('GET', `/api/v1/namespaces/${name}`);
    } catch (e) {
      if (e instanceof KubeError && e.code === 404) return true;
      throw e;
    }
    if (!ns.metadata.deletionTimestamp) return true;
    const finalizers: string[] = (ns.spec as any)?.finalizers ?? [];
    if (!finalizers.includes('kubernetes')) return true;
    const resources = (await this.client.resources()).filter(
      (r: ApiResource) => r.namespaced && r.verbs.includes('deletecollection') && r.verbs.includes('list'),
    );
    let remaining = 0;
    for (const r of resources) {
      const path = collectionPath(r, name);
      const list = await this.client.request('GET', path);
      if (!list.items?.length) continue;
      remaining += list.items.length;
      await this.client.request('DELETE', `${path}?propagationPolicy=Background`);
    }
    if (remaining) {
      this.log.debug('namespace content remaining', { namespace: name, objects: remaining });
      return false;
    }
    await this.client.request('PUT', `/api/v1/namespaces/${name}/finalize`, {
      ...ns,
      spec: { ...(ns.spec as object), finalizers: finalizers.filter((f) => f !== 'kubernetes') },
    });
    this.log.info('namespace finalized', { namespace: name });
    return true;
  }
}
