// The cluster manager: static clusters from the bootstrap, dynamic ones from CDS (the full set in every response),
// warming until their first ClusterLoadAssignment (EDS) or DNS answer, and EDS updates. It keeps what config_dump
// shows: versions, last update times, warming clusters, and the last rejected update per name (error_state).
import { timestampString } from '../../shared/envoy/protojson.ts';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import { validateJson } from '../../shared/envoy/validate.ts';
import { ConfigError } from '../config/errors.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { StatsStore } from '../stats.ts';
import type { DecodedResource } from '../xds/ads-client.ts';
import {
  type ErrorState,
  errorState,
  sameJson,
  subscriptionStats,
  versionHash,
  WarmingInit,
} from '../xds/resource-state.ts';
import { Cluster } from './cluster.ts';
import { compileCluster, parseLoadAssignment } from './cluster-config.ts';
import type { ClusterManagerView } from './cluster-manager-view.ts';

type J = Record<string, any>;

export interface DynamicClusterEntry {
  cluster: Cluster;
  versionInfo: string;
  lastUpdated: string;
}

export interface ClusterManagerDeps {
  stats: StatsStore;
  logs: LogRegistry;
  connectionIds: () => number;
  /** Subscribes EDS for these service names. */
  setEdsNames(names: string[]): void;
}

export class ClusterManager implements ClusterManagerView {
  readonly static_ = new Map<string, { cluster: Cluster; lastUpdated: string }>();
  readonly active = new Map<string, DynamicClusterEntry>();
  readonly warming = new Map<string, DynamicClusterEntry>();
  readonly errors = new Map<string, ErrorState>();
  /** Last ClusterLoadAssignment per service name, for clusters that subscribe after it arrived. */
  private readonly assignments = new Map<string, J>();
  readonly edsVersions = new Map<string, { version: string; lastUpdated: string }>();
  cdsVersion = '';
  private readonly deps: ClusterManagerDeps;
  private readonly log: Logger;
  private readonly cds: ReturnType<typeof cdsStats>;
  private readonly cm: ReturnType<typeof cmStats>;
  /** Done when the initial CDS response and its clusters are in (Envoy's cluster manager init). */
  private readonly init: WarmingInit;
  private connectionCounter: () => number;

  constructor(deps: ClusterManagerDeps) {
    this.deps = deps;
    this.log = deps.logs.logger('upstream');
    this.connectionCounter = deps.connectionIds;
    this.cds = cdsStats(deps.stats);
    this.cm = cmStats(deps.stats);
    this.init = new WarmingInit(() => this.warming.size > 0, this.cds.init_fetch_timeout);
  }

  nextConnectionId(): number {
    return this.connectionCounter();
  }

  get(name: string): Cluster | undefined {
    return this.static_.get(name)?.cluster ?? this.active.get(name)?.cluster;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  all(): Cluster[] {
    return [...[...this.static_.values()].map((e) => e.cluster), ...[...this.active.values()].map((e) => e.cluster)];
  }

  private make(json: J, addedViaApi: boolean): Cluster {
    const spec = compileCluster(json);
    return new Cluster(spec, {
      stats: this.deps.stats,
      logs: this.deps.logs,
      connectionIds: this.connectionCounter,
      addedViaApi,
    });
  }

  /** Bootstrap static_resources.clusters; a bad one is a startup error. */
  addStatic(json: J): Cluster {
    const name = String(json.name ?? '');
    const bad = validateJson('envoy.config.cluster.v3.Cluster', json);
    if (bad) throw new ConfigError(`static cluster '${name}': Proto constraint validation failed (${bad.chain})`);
    if (this.static_.has(name)) throw new ConfigError(`cluster manager: duplicate cluster '${name}' found`);
    const c = this.make(json, false);
    this.static_.set(name, { cluster: c, lastUpdated: timestampString(Date.now()) });
    this.cm.cluster_added.inc();
    this.updateGauges();
    return c;
  }

  /** Static clusters are initialized (DNS answered). */
  async staticReady(): Promise<void> {
    await Promise.all([...this.static_.values()].map((e) => e.cluster.initialized));
  }

  /** Handles a CDS response (the complete set). Returns the NACK reason, if any. */
  async onCds(resources: DecodedResource[], version: string): Promise<string | undefined> {
    this.cds.update_attempt.inc();
    const now = timestampString(Date.now());
    const errors: string[] = [];
    const seen = new Set<string>();
    const accepted: Array<{ name: string; json: J }> = [];
    for (const r of resources) {
      if (seen.has(r.name)) {
        errors.push(`duplicate cluster ${r.name} found`);
        continue;
      }
      seen.add(r.name);
      if (this.static_.has(r.name)) {
        errors.push(`'${r.name}': cannot add/update static cluster via CDS`);
        continue;
      }
      const existing = this.active.get(r.name) ?? this.warming.get(r.name);
      if (existing && existing.cluster.spec.json === r.json) {
        accepted.push(r);
        continue;
      }
      try {
        const bad = validateJson('envoy.config.cluster.v3.Cluster', r.json);
        if (bad) throw new ConfigError(`Proto constraint validation failed (${bad.chain})`);
        compileCluster(r.json);
        accepted.push(r);
      } catch (err) {
        const msg = (err as Error).message;
        errors.push(`${r.name}: ${msg}`);
        this.errors.set(r.name, errorState(TYPE_URL.cluster, r.json, msg, version, now));
      }
    }
    if (resources.length === 0) this.cds.update_empty.inc();
    let added = 0;
    let removed = 0;
    // Apply the valid ones, as Envoy does even when part of the update is rejected.
    for (const { name, json } of accepted) {
      const current = this.active.get(name) ?? this.warming.get(name);
      if (current && sameJson(current.cluster.spec.json, json)) {
        current.versionInfo = this.active.has(name) ? current.versionInfo : version;
        this.errors.delete(name);
        continue;
      }
      const cluster = this.make(json, true);
      const entry: DynamicClusterEntry = { cluster, versionInfo: version, lastUpdated: now };
      this.errors.delete(name);
      const old = this.warming.get(name);
      if (old) old.cluster.destroy();
      this.warming.set(name, entry);
      this.log.info(`add/update cluster ${name} starting warming`);
      if (this.active.has(name)) this.cm.cluster_modified.inc();
      else this.cm.cluster_added.inc();
      added++;
      const cached = this.assignments.get(cluster.spec.edsServiceName);
      if (cluster.spec.type === 'EDS' && cached) cluster.applyLoadAssignment(cached);
      cluster.initialized.then(() => this.finishWarming(name, entry));
    }
    // Clusters missing from the set go, even when part of the update is rejected (Envoy's CdsApiHelper).
    for (const name of [...this.active.keys(), ...this.warming.keys()]) {
      if (seen.has(name)) continue;
      const e = this.active.get(name) ?? this.warming.get(name);
      this.active.delete(name);
      this.warming.delete(name);
      e?.cluster.destroy();
      this.log.info(`removing cluster ${name}`);
      this.cm.cluster_removed.inc();
      removed++;
    }
    for (const name of [...this.errors.keys()]) if (!seen.has(name)) this.errors.delete(name);
    this.log.info(`cds: add ${added} cluster(s), remove ${removed} cluster(s)`);
    this.updateGauges();
    this.syncEdsNames();
    if (errors.length > 0) {
      this.cds.update_rejected.inc();
      return `Error adding/updating cluster(s) ${errors.join(', ')}`;
    }
    this.cds.update_success.inc();
    this.cds.version.set(versionHash(version));
    this.cdsVersion = version;
    this.init.responseApplied();
    return undefined;
  }

  private finishWarming(name: string, entry: DynamicClusterEntry): void {
    if (this.warming.get(name) !== entry) return;
    this.warming.delete(name);
    const old = this.active.get(name);
    this.active.set(name, entry);
    if (old) old.cluster.destroy();
    this.log.info(`warming cluster ${name} complete`);
    this.updateGauges();
    this.init.check();
  }

  /** EDS: assignments by cluster (service) name; a bad one rejects the whole response. */
  async onEds(resources: DecodedResource[], version: string): Promise<string | undefined> {
    const now = timestampString(Date.now());
    const clustersFor = (service: string) =>
      [...this.warming.values(), ...this.active.values()].filter((e) => e.cluster.spec.edsServiceName === service);
    for (const r of resources) {
      for (const e of clustersFor(r.name)) this.deps.stats.counter(`cluster.${e.cluster.name}.update_attempt`).inc();
    }
    for (const r of resources) {
      try {
        const bad = validateJson('envoy.config.endpoint.v3.ClusterLoadAssignment', r.json);
        if (bad) throw new ConfigError(`Proto constraint validation failed (${bad.chain})`);
        parseLoadAssignment(r.json, 'endpoints');
      } catch (err) {
        for (const e of clustersFor(r.name)) e.cluster.stats.update_rejected.inc();
        return `${r.name}: ${(err as Error).message}`;
      }
    }
    for (const r of resources) {
      this.assignments.set(r.name, r.json);
      this.edsVersions.set(r.name, { version, lastUpdated: now });
      for (const e of clustersFor(r.name)) {
        e.cluster.applyLoadAssignment(r.json);
        e.cluster.stats.update_success.inc();
        if ((r.json.endpoints ?? []).length === 0) e.cluster.stats.update_empty.inc();
        e.cluster.stats.version.set(versionHash(version));
      }
    }
    return undefined;
  }

  private syncEdsNames(): void {
    const names = new Set<string>();
    for (const e of [...this.warming.values(), ...this.active.values()]) {
      if (e.cluster.spec.type === 'EDS') names.add(e.cluster.spec.edsServiceName);
    }
    for (const n of [...this.assignments.keys()]) if (!names.has(n)) this.assignments.delete(n);
    this.deps.setEdsNames([...names]);
  }

  private updateGauges(): void {
    this.cm.active_clusters.set(this.static_.size + this.active.size);
    this.cm.warming_clusters.set(this.warming.size);
  }

  /** The initial fetch timed out or the stream failed: initialization goes on without CDS (Envoy's behaviour). */
  initFetchTimeout(): void {
    this.init.fetchTimedOut();
  }

  /** Resolves when CDS delivered (or timed out) and no cluster is warming. */
  initialized(): Promise<void> {
    return this.init.done();
  }

  /** A warming cluster whose EDS never came: Envoy gives up waiting after the initial fetch timeout. */
  stopWaitingForWarming(): void {
    for (const [name, e] of [...this.warming]) {
      this.log.warn(`cluster ${name} initialization timed out waiting for its ClusterLoadAssignment`);
      this.finishWarming(name, e);
    }
  }

  destroy(): void {
    for (const c of this.all()) c.destroy();
    for (const e of this.warming.values()) e.cluster.destroy();
  }
}

function cdsStats(s: StatsStore) {
  return { ...subscriptionStats(s, 'cluster_manager.cds.'), update_time: s.gauge('cluster_manager.cds.update_time') };
}

function cmStats(s: StatsStore) {
  return {
    active_clusters: s.gauge('cluster_manager.active_clusters'),
    warming_clusters: s.gauge('cluster_manager.warming_clusters'),
    cluster_added: s.counter('cluster_manager.cluster_added'),
    cluster_modified: s.counter('cluster_manager.cluster_modified'),
    cluster_removed: s.counter('cluster_manager.cluster_removed'),
    cluster_updated: s.counter('cluster_manager.cluster_updated'),
  };
}
