// The embedded cluster's own Kubernetes client, for its controllers and its node agent: HTTPS to the API server with
// the credentials of a client-node KubeConfig (the same path, authentication, admission and watch semantics as every
// other client; apiserver/README.md "How controllers talk to the server"), undici with keep-alive. list-watch.ts
// builds the watch loop on it, events.ts the event recorder.
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';

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

  /** GET of one object: undefined when it does not exist (404); other errors throw. */
  async getIfExists<T = any>(path: string): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', path);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
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
