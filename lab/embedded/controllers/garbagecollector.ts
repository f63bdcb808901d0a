// Garbage collection by ownerReferences, as Kubernetes' garbage collector does it:
// - a dependent all of whose owners are gone (absent, or present with another uid) is deleted; one that lost only
//   some owners has those references removed;
// - background deletion (the default): the owner goes at once, the dependents follow;
// - foreground deletion (owner finalizer `foregroundDeletion`): dependents are deleted first, and the finalizer is
//   removed once no dependent with blockOwnerDeletion=true remains;
// - orphan deletion (owner finalizer `orphan`): dependents lose their reference to the owner, then the finalizer goes.
// Owners missing from the watch caches are confirmed with a live GET before anything is deleted. Resource types are
// rediscovered when a CRD changes, so custom resources are owners and dependents too.

import type { OwnerReference, ServedObject } from '../../../system/shared/kobject.ts';
import type { Logger } from '../../../system/shared/log.ts';
import { type ApiResource, collectionPath, type KubeClient, KubeError, objectPath } from '../client/kube-client.ts';
import { ListWatch } from '../client/list-watch.ts';

interface Node {
  r: ApiResource;
  obj: ServedObject;
}

export class GarbageCollector {
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly watches = new Map<string, ListWatch>();
  private readonly nodes = new Map<string, Node>();
  private readonly dependents = new Map<string, Set<string>>();
  private resources: ApiResource[] = [];
  private readonly queue = new Set<string>();
  private draining = false;
  private stopped = false;
  private discoveryTimer?: NodeJS.Timeout;
  private rediscoverTimer?: NodeJS.Timeout;
  private crdWatch?: ListWatch;
  private retryTimer?: NodeJS.Timeout;
  private synced = 0;

  constructor(client: KubeClient, log: Logger) {
    this.client = client;
    this.log = log;
  }

  async start(): Promise<void> {
    await this.discover();
    // New resource types come from CRDs: rediscover when one changes (and every 30 s as a backstop).
    const rediscover = () => {
      if (this.rediscoverTimer || this.stopped) return;
      this.rediscoverTimer = setTimeout(() => {
        this.rediscoverTimer = undefined;
        this.discover().catch((e) => this.log.debug('discovery failed', { err: e as Error }));
      }, 100);
    };
    this.crdWatch = new ListWatch(
      this.client,
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      (type) => {
        if (type !== 'SYNC') rediscover();
      },
      this.log,
    );
    this.crdWatch.start();
    this.discoveryTimer = setInterval(rediscover, 30_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.discoveryTimer) clearInterval(this.discoveryTimer);
    if (this.rediscoverTimer) clearTimeout(this.rediscoverTimer);
    this.crdWatch?.stop();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const w of this.watches.values()) w.stop();
  }

  /** Number of resource types whose first list has completed (tests wait on it). */
  syncedTypes(): number {
    return this.synced;
  }

  private async discover(): Promise<void> {
    const all = await this.client.resources();
    this.resources = all;
    for (const r of all) {
      if (!['list', 'watch', 'delete'].every((v) => r.verbs.includes(v))) continue;
      const key = `${r.group}/${r.version}/${r.plural}`;
      if (this.watches.has(key) || this.stopped) continue;
      // Events are never owners or dependents worth collecting here; skipping them saves a watch per lab.
      if (r.plural === 'events') continue;
      let first = true;
      const w = new ListWatch(
        this.client,
        collectionPath(r),
        (type, obj) => {
          if (type === 'SYNC') {
            if (first) this.synced++;
            first = false;
            return;
          }
          if (obj) this.observe(r, type, obj);
        },
        this.log,
      );
      this.watches.set(key, w);
      w.start();
    }
  }

  private observe(r: ApiResource, type: string, obj: ServedObject): void {
    const uid = obj.metadata.uid;
    const prev = this.nodes.get(uid);
    if (prev) for (const ref of prev.obj.metadata.ownerReferences ?? []) this.dependents.get(ref.uid)?.delete(uid);
    if (type === 'DELETED') {
      this.nodes.delete(uid);
      for (const d of this.dependents.get(uid) ?? []) this.enqueue(d);
      for (const ref of obj.metadata.ownerReferences ?? []) this.enqueue(ref.uid);
      return;
    }
    this.nodes.set(uid, { r, obj });
    for (const ref of obj.metadata.ownerReferences ?? []) {
      let s = this.dependents.get(ref.uid);
      if (!s) {
        s = new Set();
        this.dependents.set(ref.uid, s);
      }
      s.add(uid);
      // An owner in foreground deletion re-checks when its dependents change.
      this.enqueue(ref.uid);
    }
    if (obj.metadata.ownerReferences?.length || obj.metadata.deletionTimestamp) this.enqueue(uid);
  }

  private enqueue(uid: string): void {
    this.queue.add(uid);
    if (!this.draining) queueMicrotask(() => void this.drain());
  }

  private async drain(): Promise<void> {
    if (this.draining || this.stopped) return;
    this.draining = true;
    const retry: string[] = [];
    try {
      while (this.queue.size && !this.stopped) {
        const uid = this.queue.values().next().value!;
        this.queue.delete(uid);
        try {
          if (!(await this.process(uid))) retry.push(uid);
        } catch (e) {
          if (!(e instanceof KubeError && (e.code === 404 || e.code === 409)))
            this.log.warn('gc failed', { uid, err: e as Error });
          retry.push(uid);
        }
      }
    } finally {
      this.draining = false;
    }
    if (retry.length && !this.stopped) {
      this.retryTimer = setTimeout(() => {
        for (const u of retry) this.enqueue(u);
      }, 500);
    }
  }

  private resourceFor(apiVersion: string, kind: string): ApiResource | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    return (
      this.resources.find((r) => r.group === group && r.version === version && r.kind === kind) ??
      this.resources.find((r) => r.group === group && r.kind === kind)
    );
  }

  /** The owner as it is now, or undefined when it is gone (absent or replaced by an object with another uid). */
  private async owner(ref: OwnerReference, namespace: string | undefined): Promise<ServedObject | undefined> {
    const cached = this.nodes.get(ref.uid);
    if (cached) return cached.obj;
    const r = this.resourceFor(ref.apiVersion, ref.kind);
    if (!r) return undefined;
    const o = await this.client.getIfExists<ServedObject>(
      objectPath(r, r.namespaced ? namespace : undefined, ref.name),
    );
    return o && o.metadata.uid === ref.uid ? o : undefined;
  }

  /** Returns false to be retried later. */
  private async process(uid: string): Promise<boolean> {
    const node = this.nodes.get(uid);
    if (!node) return true;
    const { r, obj } = node;
    const ns = obj.metadata.namespace;
    const fin = obj.metadata.finalizers ?? [];
    let done = true;

    if (obj.metadata.deletionTimestamp && fin.includes('orphan')) {
      for (const d of this.dependents.get(uid) ?? []) {
        const dn = this.nodes.get(d);
        if (dn) await this.removeOwnerRefs(dn, new Set([uid]));
      }
      await this.removeFinalizer(node, 'orphan');
      return true;
    }
    if (obj.metadata.deletionTimestamp && fin.includes('foregroundDeletion')) {
      let blocking = 0;
      for (const d of this.dependents.get(uid) ?? []) {
        const dn = this.nodes.get(d);
        if (!dn) continue;
        const ref = (dn.obj.metadata.ownerReferences ?? []).find((x) => x.uid === uid);
        if (ref?.blockOwnerDeletion) blocking++;
        if (!dn.obj.metadata.deletionTimestamp) await this.deleteObject(dn, 'Foreground');
      }
      if (blocking === 0) await this.removeFinalizer(node, 'foregroundDeletion');
      else done = false;
    }

    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length && !obj.metadata.deletionTimestamp) {
      const gone = new Set<string>();
      let foreground = false;
      for (const ref of refs) {
        const o = await this.owner(ref, ns);
        if (!o) gone.add(ref.uid);
        else if (o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).includes('foregroundDeletion'))
          foreground = true;
      }
      if (gone.size === refs.length) {
        this.log.debug('deleting dependent whose owners are gone', {
          resource: r.plural,
          namespace: ns,
          name: obj.metadata.name,
        });
        await this.deleteObject(node, 'Background');
      } else if (foreground) {
        await this.deleteObject(node, 'Foreground');
      } else if (gone.size) {
        await this.removeOwnerRefs(node, gone);
      }
    }
    return done;
  }

  private async deleteObject(n: Node, policy: 'Background' | 'Foreground'): Promise<void> {
    const o = n.obj;
    try {
      await this.client.request('DELETE', objectPath(n.r, o.metadata.namespace, o.metadata.name), {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: policy,
        preconditions: { uid: o.metadata.uid },
      });
    } catch (e) {
      if (!(e instanceof KubeError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  private async removeOwnerRefs(n: Node, uids: Set<string>): Promise<void> {
    const o = n.obj;
    const refs = (o.metadata.ownerReferences ?? []).filter((x) => !uids.has(x.uid));
    await this.client.request(
      'PATCH',
      objectPath(n.r, o.metadata.namespace, o.metadata.name),
      { metadata: { ownerReferences: refs.length ? refs : null, resourceVersion: o.metadata.resourceVersion } },
      'application/merge-patch+json',
    );
  }

  private async removeFinalizer(n: Node, finalizer: string): Promise<void> {
    const o = n.obj;
    const fin = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    await this.client.request(
      'PATCH',
      objectPath(n.r, o.metadata.namespace, o.metadata.name),
      { metadata: { finalizers: fin.length ? fin : null, resourceVersion: o.metadata.resourceVersion } },
      'application/merge-patch+json',
    );
  }
}
