// Snapshot cache (after go-control-plane's pkg/cache/v3, which knows nothing of its server): one consistent, versioned
// snapshot per proxy role (`gwvendor-kube-gateway-api~<ns>~<gateway>`). Resources are encoded to Any once, when they
// change, and those exact bytes are what every proxy of the role receives (server.ts) and what /snapshots/xds decodes.
import { isDeepStrictEqual } from 'node:util';
import { type AnyMessage, packAny } from '../../shared/envoy/protojson.ts';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import type { SnapshotResources } from '../pipeline.ts';
import type { Json } from '../xds/translator/envoy.ts';

/** Push order: clusters before their endpoints, listeners before their routes (Envoy's warming rules). */
export const PUSH_ORDER = [
  TYPE_URL.cluster,
  TYPE_URL.clusterLoadAssignment,
  TYPE_URL.listener,
  TYPE_URL.routeConfiguration,
] as const;
export type TypeUrl = (typeof PUSH_ORDER)[number];

export const TYPE_SHORT: Record<TypeUrl, string> = {
  [TYPE_URL.cluster]: 'clusters',
  [TYPE_URL.clusterLoadAssignment]: 'endpoints',
  [TYPE_URL.listener]: 'listeners',
  [TYPE_URL.routeConfiguration]: 'routes',
};

export interface CachedResource {
  name: string;
  json: Json;
  any: AnyMessage;
}

export interface TypeResources {
  /** The snapshot version at which this type last changed. */
  version: string;
  byName: Map<string, CachedResource>;
}

export interface Snapshot {
  role: string;
  gateway: string;
  /** Incremented whenever any resource of the role changes. */
  version: number;
  createdAt: Date;
  types: Record<TypeUrl, TypeResources>;
}

export type SnapshotListener = (s: Snapshot) => void;

function resourceName(typeUrl: TypeUrl, json: Json): string {
  return String(typeUrl === TYPE_URL.clusterLoadAssignment ? json.cluster_name : json.name);
}

/** Throws when the snapshot is not self-consistent (an EDS cluster without endpoints, an RDS name without routes). */
export function checkConsistency(r: SnapshotResources): void {
  const cla = new Set(r.endpoints.map((e) => String(e.cluster_name)));
  for (const c of r.clusters) {
    if (c.type === 'EDS' && !cla.has(String(c.name)))
      throw new Error(`cluster ${String(c.name)} has no ClusterLoadAssignment`);
  }
  const rc = new Set(r.routes.map((x) => String(x.name)));
  for (const l of r.listeners) {
    const json = JSON.stringify(l);
    for (const m of json.matchAll(/"route_config_name":"([^"]+)"/g)) {
      if (!rc.has(m[1])) throw new Error(`listener ${String(l.name)} refers to missing RouteConfiguration ${m[1]}`);
    }
  }
}

export class SnapshotCache {
  private readonly snapshots = new Map<string, Snapshot>();
  /** Versions keep increasing for a role even across a delete, so a proxy never sees an old version number again. */
  private readonly lastVersion = new Map<string, number>();
  private readonly listeners = new Set<SnapshotListener>();
  private readonly removedListeners = new Set<(role: string) => void>();
  encodes = 0;

  get(role: string): Snapshot | undefined {
    return this.snapshots.get(role);
  }

  roles(): string[] {
    return [...this.snapshots.keys()].sort();
  }

  onChange(l: SnapshotListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  onRemove(l: (role: string) => void): () => void {
    this.removedListeners.add(l);
    return () => this.removedListeners.delete(l);
  }

  /**
   * Sets the resources of a role. Unchanged resources keep their encoded bytes; when nothing changed, nothing is
   * versioned or pushed. Returns the snapshot now current.
   */
  set(r: SnapshotResources): Snapshot {
    checkConsistency(r);
    const prev = this.snapshots.get(r.role);
    const nextVersion = (prev?.version ?? this.lastVersion.get(r.role) ?? 0) + 1;
    const incoming: Record<TypeUrl, Json[]> = {
      [TYPE_URL.cluster]: r.clusters,
      [TYPE_URL.clusterLoadAssignment]: r.endpoints,
      [TYPE_URL.listener]: r.listeners,
      [TYPE_URL.routeConfiguration]: r.routes,
    };
    let changed = !prev;
    const types = {} as Record<TypeUrl, TypeResources>;
    for (const t of PUSH_ORDER) {
      const old = prev?.types[t];
      const byName = new Map<string, CachedResource>();
      let typeChanged = !old || old.byName.size !== incoming[t].length;
      for (const json of incoming[t]) {
        const name = resourceName(t, json);
        const before = old?.byName.get(name);
        if (before && (before.json === json || isDeepStrictEqual(before.json, json))) {
          byName.set(name, before);
          continue;
        }
        typeChanged = true;
        this.encodes++;
        byName.set(name, { name, json, any: packAny(json) });
      }
      if (typeChanged) changed = true;
      types[t] = { version: typeChanged || !old ? String(nextVersion) : old.version, byName };
    }
    if (!changed && prev) return prev;
    const snap: Snapshot = { role: r.role, gateway: r.gateway, version: nextVersion, createdAt: new Date(), types };
    this.snapshots.set(r.role, snap);
    this.lastVersion.set(r.role, nextVersion);
    for (const l of this.listeners) l(snap);
    return snap;
  }

  delete(role: string): void {
    if (!this.snapshots.delete(role)) return;
    for (const l of this.removedListeners) l(role);
  }
}
