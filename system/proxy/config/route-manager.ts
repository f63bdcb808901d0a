// RDS: one provider per route configuration name, shared by the HCMs that name it. Listeners warm until their
// provider has a table. A rejected RouteConfiguration leaves the previous table in place and is kept as the
// provider's error_state for config_dump.
import { timestampString } from '../../shared/envoy/protojson.ts';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import { validateJson } from '../../shared/envoy/validate.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { StatsStore } from '../stats.ts';
import type { DecodedResource } from '../xds/ads-client.ts';
import { type ErrorState, errorState, sameJson, versionHash } from '../xds/resource-state.ts';
import { compileRouteConfiguration, type RouteTable } from './route-table.ts';

type J = Record<string, any>;

/** Route configurations delivered by RDS, shared by every HCM that names them. */
export interface RdsProvider {
  readonly name: string;
  table: RouteTable | undefined;
  /** Resolves when the first RouteConfiguration arrived (listener warming waits for it). */
  readonly ready: Promise<void>;
}

export class Provider implements RdsProvider {
  readonly name: string;
  table: RouteTable | undefined;
  json: J | undefined;
  versionInfo = '';
  lastUpdated = '';
  error: ErrorState | undefined;
  readonly ready: Promise<void>;
  resolve!: () => void;
  readonly statPrefix: string;
  constructor(name: string, statPrefix: string) {
    this.name = name;
    this.statPrefix = statPrefix;
    this.ready = new Promise((r) => {
      this.resolve = r;
    });
  }
}

export interface RouteManagerDeps {
  stats: StatsStore;
  logs: LogRegistry;
  setRdsNames(names: string[]): void;
}

export class RouteManager {
  readonly providers = new Map<string, Provider>();
  private readonly deps: RouteManagerDeps;
  private readonly log: Logger;

  constructor(deps: RouteManagerDeps) {
    this.deps = deps;
    this.log = deps.logs.logger('rds');
  }

  /** The provider for a route config name (created on first use, with the HCM's stat prefix for its stats). */
  provider(name: string, hcmStatPrefix: string): Provider {
    let p = this.providers.get(name);
    if (!p) {
      p = new Provider(name, `http.${hcmStatPrefix}.rds.${name}.`);
      for (const k of ['update_attempt', 'update_success', 'update_rejected', 'update_empty', 'config_reload']) {
        this.deps.stats.counter(p.statPrefix + k);
      }
      this.deps.stats.gauge(p.statPrefix + 'version');
      this.providers.set(name, p);
    }
    return p;
  }

  /** Keeps only the providers some listener still uses, and subscribes to exactly those names. */
  retain(names: Set<string>): void {
    for (const n of [...this.providers.keys()]) if (!names.has(n)) this.providers.delete(n);
    this.deps.setRdsNames([...names]);
  }

  async onRds(resources: DecodedResource[], version: string): Promise<string | undefined> {
    const now = timestampString(Date.now());
    const compiled: Array<{ p: Provider; table: RouteTable; json: J }> = [];
    const counter = (p: Provider, k: string) => this.deps.stats.counter(p.statPrefix + k);
    for (const r of resources) {
      const p = this.providers.get(r.name);
      if (!p) {
        this.log.debug(`RouteConfiguration ${r.name} is not subscribed; ignored`);
        continue;
      }
      counter(p, 'update_attempt').inc();
      // The same resource as before (the ADS client hands over the identical object): nothing to redo.
      if (p.json === r.json && p.table) {
        compiled.push({ p, json: r.json, table: p.table });
        continue;
      }
      try {
        const bad = validateJson('envoy.config.route.v3.RouteConfiguration', r.json);
        if (bad) throw new Error(`Proto constraint validation failed (${bad.chain})`);
        compiled.push({
          p,
          json: r.json,
          table: compileRouteConfiguration(r.json, { validateClustersDefault: false }),
        });
      } catch (err) {
        const msg = (err as Error).message;
        counter(p, 'update_rejected').inc();
        p.error = errorState(TYPE_URL.routeConfiguration, r.json, msg, version, now);
        return `${r.name}: ${msg}`;
      }
    }
    for (const { p, table, json } of compiled) {
      const changed = !p.json || !sameJson(p.json, json);
      p.table = table;
      p.json = json;
      p.versionInfo = version;
      p.error = undefined;
      if (changed) {
        p.lastUpdated = now;
        counter(p, 'config_reload').inc();
        this.log.debug(
          `rds: loading new configuration: config_name=${p.name} hash=${versionHash(JSON.stringify(json))}`,
        );
      }
      counter(p, 'update_success').inc();
      this.deps.stats.gauge(p.statPrefix + 'version').set(versionHash(version));
      p.resolve();
    }
    return undefined;
  }

  /** Listeners waiting for routes that never came stop waiting (initial fetch timeout). */
  giveUpWaiting(): void {
    for (const p of this.providers.values()) p.resolve();
  }
}
