// The API-machinery controllers' Kubernetes client: HTTPS to the API server with the credentials of a client-node
// KubeConfig (the same path, authentication, admission and watch semantics as every other client), plus a
// resilient list-watch loop (relist on 410 Expired, re-watch with back-off on errors; client-node's informer stops on
// errors, so controllers that must not stop use this loop).
import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import type { ServedObject } from '../../../system/shared/kobject.ts';
import type { Logger } from '../../../system/shared/log.ts';

export class KubeError extends Error {
  readonly code: number;
  readonly status: any;
  constructor(code: number, status: any) {
    super(status?.message ?? `HTTP ${code}`);
    this.code = code;
    this.status = status;
  }
}

export interface ApiResource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

export class KubeClient {
  readonly kc: KubeConfig;
  private readonly server: string;
  private readonly dispatcher: Agent;
  private readonly token: string;

  constructor(kc: KubeConfig) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server;
    const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString() : undefined;
    this.dispatcher = new Agent({ connect: { ca }, connections: 8 });
    this.token = kc.getCurrentUser()?.token ?? '';
  }

  async request<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const res = await fetch(this.server + path, {
      method,
      dispatcher: this.dispatcher,
      headers: {
        Authorization: `Bearer ${this.token}`,
        Accept: 'application/json',
        'User-Agent': 'gwlab-controller-manager',
        ...(body !== undefined ? { 'Content-Type': contentType } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = { message: text };
    }
    if (res.status >= 400) throw new KubeError(res.status, parsed);
    return parsed as T;
  }

  /** Every resource the server serves (from the legacy per-group-version discovery lists). */
  async resources(): Promise<ApiResource[]> {
    const out: ApiResource[] = [];
    const add = (group: string, version: string, list: any) => {
      for (const r of list.resources ?? []) {
        if (String(r.name).includes('/')) continue;
        out.push({ group, version, plural: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs ?? [] });
      }
    };
    add('', 'v1', await this.request('GET', '/api/v1'));
    const groups = await this.request('GET', '/apis');
    for (const g of groups.groups ?? []) {
      const v = g.preferredVersion?.version ?? g.versions?.[0]?.version;
      try {
        add(g.name, v, await this.request('GET', `/apis/${g.name}/${v}`));
      } catch (e) {
        if (!(e instanceof KubeError && e.code === 404)) throw e;
      }
    }
    return out;
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

export function basePath(r: { group: string; version: string }): string {
  return r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
}

export function collectionPath(r: ApiResource, namespace?: string): string {
  return r.namespaced && namespace
    ? `${basePath(r)}/namespaces/${namespace}/${r.plural}`
    : `${basePath(r)}/${r.plural}`;
}

export function objectPath(r: ApiResource, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

export type WatchEvent = 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC';

/**
 * List, then watch from the list's resourceVersion, forever: on 410 it relists (reporting objects that vanished as
 * DELETED), on a closed or failed stream it re-watches after a back-off. `onEvent('SYNC')` fires after each list.
 */
export class ListWatch {
  private stopped = false;
  private abort?: AbortController;
  private known = new Map<string, ServedObject>();
  private readonly client: KubeClient;
  private readonly path: string;
  private readonly onEvent: (type: WatchEvent, obj?: ServedObject) => void;
  private readonly log: Logger;

  constructor(client: KubeClient, path: string, onEvent: (type: WatchEvent, obj?: ServedObject) => void, log: Logger) {
    this.client = client;
    this.path = path;
    this.onEvent = onEvent;
    this.log = log;
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  objects(): ServedObject[] {
    return [...this.known.values()];
  }

  private async loop(): Promise<void> {
    let rv = '';
    let delay = 100;
    while (!this.stopped) {
      try {
        if (!rv) {
          const list = await this.client.request('GET', this.path);
          const seen = new Set<string>();
          for (const o of list.items as ServedObject[]) {
            seen.add(o.metadata.uid);
            const had = this.known.get(o.metadata.uid);
            this.known.set(o.metadata.uid, o);
            if (!had || had.metadata.resourceVersion !== o.metadata.resourceVersion)
              this.onEvent(had ? 'MODIFIED' : 'ADDED', o);
          }
          for (const [uid, o] of this.known) {
            if (!seen.has(uid)) {
              this.known.delete(uid);
              this.onEvent('DELETED', o);
            }
          }
          rv = list.metadata.resourceVersion;
          this.onEvent('SYNC');
        }
        rv = await this.watchOnce(rv);
        delay = 100;
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof KubeError && e.code === 404) {
          // The resource type went away (a deleted CRD): stop quietly.
          return;
        }
        this.log.debug('list-watch retry', { path: this.path, err: e as Error });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  /** Resolves with the resourceVersion to continue from ('' = relist). */
  private watchOnce(rv: string): Promise<string> {
    return new Promise((resolve, reject) => {
      let last = rv;
      let expired = false;
      const w = new Watch(this.client.kc);
      w.watch(
        this.path,
        { resourceVersion: rv, allowWatchBookmarks: true },
        (type: string, obj: any) => {
          if (type === 'ERROR') {
            if (obj?.code === 410) expired = true;
            return;
          }
          if (obj?.metadata?.resourceVersion) last = obj.metadata.resourceVersion;
          if (type === 'BOOKMARK') return;
          if (type === 'DELETED') this.known.delete(obj.metadata.uid);
          else this.known.set(obj.metadata.uid, obj);
          this.onEvent(type as WatchEvent, obj);
        },
        (err: unknown) => {
          if (expired) resolve('');
          else if (err && !this.stopped) reject(err);
          else resolve(last);
        },
      )
        .then((ctrl) => {
          this.abort = ctrl;
          if (this.stopped) ctrl.abort();
        })
        .catch(reject);
    });
  }
}
