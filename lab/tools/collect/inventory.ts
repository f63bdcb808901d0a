// The objects a collection reads, listed once per kind and shared by the collectors (the resources collector writes
// the Pods the logs collector reads from): one cluster-wide list when every namespace is collected, else one list per
// namespace. Objects are kept exactly as the API server sent them (raw.ts), with apiVersion and kind filled in.
import type { KObj, Kube } from '../../toolkit/kube.ts';
import { mapLimit } from '../proxies.ts';
import { ApiError, getJson, groupVersionPath, listAll } from './raw.ts';

/** A kind by the API versions to try, newest first: the first one the cluster serves is listed. */
export interface KindRef {
  kind: string;
  plural: string;
  apiVersions: string[];
  namespaced: boolean;
}

export interface Listed {
  apiVersion: string;
  items: KObj[];
}

const PER_NAMESPACE_PARALLEL = 6;

export const CORE_POD: KindRef = { kind: 'Pod', plural: 'pods', apiVersions: ['v1'], namespaced: true };
export const CORE_EVENT: KindRef = { kind: 'Event', plural: 'events', apiVersions: ['v1'], namespaced: true };
export const CORE_SECRET: KindRef = { kind: 'Secret', plural: 'secrets', apiVersions: ['v1'], namespaced: true };

function byNamespaceAndName(a: KObj, b: KObj): number {
  return (
    (a.metadata?.namespace ?? '').localeCompare(b.metadata?.namespace ?? '') ||
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '')
  );
}

export class Inventory {
  readonly kube: Kube;
  /** undefined: every namespace. */
  readonly namespaces?: string[];
  private readonly lists = new Map<string, Promise<Listed | undefined>>();
  private readonly discovery = new Map<string, Promise<Set<string> | undefined>>();
  private secretsRead?: Promise<KObj[]>;

  constructor(kube: Kube, namespaces?: string[]) {
    this.kube = kube;
    this.namespaces = namespaces ? [...new Set(namespaces)].sort() : undefined;
  }

  inScope(namespace: string | undefined): boolean {
    return !this.namespaces || (!!namespace && this.namespaces.includes(namespace));
  }

  /** The resources (plurals) a group version serves, or undefined when the cluster does not serve it at all. */
  private served(apiVersion: string): Promise<Set<string> | undefined> {
    let p = this.discovery.get(apiVersion);
    if (!p) {
      p = getJson<{ resources?: Array<{ name: string }> }>(this.kube.kc, groupVersionPath(apiVersion)).then(
        (r) => new Set((r.resources ?? []).map((x) => x.name)),
        (err) => {
          if (err instanceof ApiError && err.code === 404) return undefined;
          throw err;
        },
      );
      this.discovery.set(apiVersion, p);
    }
    return p;
  }

  async servedVersion(ref: KindRef): Promise<string | undefined> {
    for (const v of ref.apiVersions) if ((await this.served(v))?.has(ref.plural)) return v;
    return undefined;
  }

  /**
   * The objects of a kind in the collected namespaces (cluster-scoped kinds: all of them, and Namespaces filtered to
   * the collected ones), or undefined when the cluster does not serve the kind. Listed once; later calls share it.
   */
  list(ref: KindRef): Promise<Listed | undefined> {
    const key = `${ref.plural}/${ref.apiVersions.join(',')}`;
    let p = this.lists.get(key);
    if (!p) {
      p = this.read(ref);
      this.lists.set(key, p);
    }
    return p;
  }

  /**
   * Every Secret this user may read, for redaction: cluster-wide if allowed (a value may show up outside the
   * collected namespaces, e.g. in a control plane snapshot), else those of the collected namespaces.
   */
  secrets(): Promise<KObj[]> {
    this.secretsRead ??= (async () => {
      try {
        return await this.listAt(CORE_SECRET, 'v1');
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 403) || !this.namespaces) throw err;
        const lists = await mapLimit(this.namespaces, PER_NAMESPACE_PARALLEL, (n) => this.listAt(CORE_SECRET, 'v1', n));
        return lists.flat();
      }
    })();
    return this.secretsRead;
  }

  private async read(ref: KindRef): Promise<Listed | undefined> {
    const apiVersion = await this.servedVersion(ref);
    if (!apiVersion) return undefined;
    let items: KObj[];
    if (ref.plural === CORE_SECRET.plural && apiVersion === 'v1') {
      items = (await this.secrets()).filter((s) => this.inScope(s.metadata?.namespace));
    } else if (!ref.namespaced) {
      items = await this.listAt(ref, apiVersion);
      if (ref.kind === 'Namespace') items = items.filter((n) => this.inScope(n.metadata?.name));
    } else if (!this.namespaces) {
      items = await this.listAt(ref, apiVersion);
    } else {
      const lists = await mapLimit(this.namespaces, PER_NAMESPACE_PARALLEL, (n) => this.listAt(ref, apiVersion, n));
      items = lists.flat();
    }
    return { apiVersion, items: items.sort(byNamespaceAndName) };
  }

  private async listAt(ref: KindRef, apiVersion: string, namespace?: string): Promise<KObj[]> {
    const path = `${groupVersionPath(apiVersion)}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${ref.plural}`;
    try {
      return (await listAll(this.kube.kc, path)).map((o) => ({ apiVersion, kind: ref.kind, ...o }));
    } catch (err) {
      // A namespace that does not exist (or went away) holds nothing.
      if (namespace && err instanceof ApiError && err.code === 404) return [];
      throw err;
    }
  }
}
