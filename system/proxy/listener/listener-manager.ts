// The listener manager: static listeners from the bootstrap and dynamic ones from LDS (the full set in every
// response). A new or changed listener binds its socket first (so "address in use" rejects the update), then
// warms until its routes are there (RDS), then takes traffic. A socket is kept across updates of a listener whose
// address does not change. Sockets, active listeners and connections are active-listener.ts's.
import { timestampString } from '../../shared/envoy/protojson.ts';
import { TYPE_URL } from '../../shared/envoy/protos.ts';
import { validateJson } from '../../shared/envoy/validate.ts';
import { ConfigError } from '../config/errors.ts';
import type { RouteManager } from '../config/route-manager.ts';
import type { AccessLogSinks } from '../http/access-log.ts';
import { type HcmDeps, HcmRuntime } from '../http/hcm.ts';
import type { Logger, LogRegistry } from '../log.ts';
import { TcpProxy } from '../network/tcp-proxy.ts';
import { SniTcpProxy } from '../network/tls-inspector.ts';
import { UdpProxy } from '../network/udp-proxy.ts';
import type { StatsStore } from '../stats.ts';
import type { ClusterManager } from '../upstream/cluster-manager.ts';
import type { DecodedResource } from '../xds/ads-client.ts';
import { type ErrorState, errorState, sameJson, subscriptionStats, WarmingInit } from '../xds/resource-state.ts';
import {
  ActiveListener,
  ConnectionHandler,
  ListenerSocket,
  type NetworkRuntime,
  socketKey,
} from './active-listener.ts';
import { compileListener, type ListenerSpec } from './listener-config.ts';

type J = Record<string, any>;

export interface ListenerManagerDeps {
  stats: StatsStore;
  logs: LogRegistry;
  clusters: ClusterManager;
  routes: RouteManager;
  server: HcmDeps['server'];
  accessLogSinks: AccessLogSinks;
  connectionIds: () => number;
}

export class ListenerManager {
  readonly static_ = new Map<string, ActiveListener>();
  readonly active = new Map<string, ActiveListener>();
  readonly warming = new Map<string, ActiveListener>();
  readonly errors = new Map<string, ErrorState>();
  private readonly sockets = new Map<string, ListenerSocket>();
  ldsVersion = '';
  private readonly deps: ListenerManagerDeps;
  private readonly log: Logger;
  private readonly connections: ConnectionHandler;
  private readonly lds: ReturnType<typeof subscriptionStats>;
  private readonly lm: ReturnType<typeof lmStats>;
  private readonly init: WarmingInit;
  /** Static listeners accept requests only once the server is initialized (Envoy starts workers then). */
  private started = false;

  constructor(deps: ListenerManagerDeps) {
    this.deps = deps;
    this.log = deps.logs.logger('config');
    this.connections = new ConnectionHandler(deps.logs, deps.connectionIds, deps.stats);
    this.lds = subscriptionStats(deps.stats, 'listener_manager.lds.');
    this.lm = lmStats(deps.stats);
    this.init = new WarmingInit(() => this.warming.size > 0, this.lds.init_fetch_timeout);
  }

  /** Every listener that serves or will serve traffic, for /listeners (static first, then dynamic, by name). */
  listening(): ActiveListener[] {
    return [
      ...this.static_.values(),
      ...[...this.active.values()].sort((a, b) => (a.spec.name < b.spec.name ? -1 : 1)),
    ];
  }

  /** What serves the listener: its HTTP connection manager, tcp_proxy or udp_proxy. */
  private makeRuntime(spec: ListenerSpec, statPrefix: string, port: number, isStatic: boolean): NetworkRuntime {
    const d = this.deps;
    const l4 = { stats: d.stats, logs: d.logs, clusters: d.clusters };
    if (spec.tcpProxy) return new TcpProxy(spec.tcpProxy, l4);
    if (spec.sniChains) return new SniTcpProxy(spec.sniChains, { ...l4, listenerStatPrefix: statPrefix });
    if (spec.udpProxy) return new UdpProxy(spec.udpProxy, l4);
    const hcmPrefix = String(spec.hcm.stat_prefix ?? '');
    return new HcmRuntime(spec.hcm, {
      stats: d.stats,
      logs: d.logs,
      clusters: d.clusters,
      server: d.server,
      accessLogSinks: d.accessLogSinks,
      rds: (name) => d.routes.provider(name, hcmPrefix),
      chainRds: (spec.tls ?? []).flatMap((c) => (c.routeConfigName ? [c.routeConfigName] : [])),
      listenerStatPrefix: statPrefix,
      listenerPort: port,
      staticListener: isStatic,
    });
  }

  private statPrefixFor(spec: ListenerSpec, port: number): string {
    if (spec.statPrefix) return `listener.${spec.statPrefix}.`;
    const addr = spec.address.includes(':') ? `[${spec.address}]` : spec.address;
    return `listener.${addr}_${port}.`;
  }

  private async socketFor(spec: ListenerSpec, owner: string): Promise<ListenerSocket> {
    const key = socketKey(spec.kind, spec.address, spec.port);
    const existing = spec.port !== 0 ? this.sockets.get(key) : undefined;
    if (existing) {
      const user = [...this.static_.values(), ...this.active.values(), ...this.warming.values()].find(
        (l) => l.socket === existing && l.spec.name !== owner,
      );
      if (user) {
        throw new ConfigError(
          `error adding listener '${owner}': listener '${user.spec.name}' has duplicate address '${key}' as existing listener`,
        );
      }
      if (existing.kind !== spec.kind) {
        throw new ConfigError(
          `error adding listener '${owner}': its ${existing.kind} socket on '${key}' cannot become a ${spec.kind} one in place (remove the listener first)`,
        );
      }
      return existing;
    }
    const sock = new ListenerSocket(spec.address, spec.port, this.connections, spec.kind);
    await sock.listen();
    this.sockets.set(sock.key, sock);
    if (spec.port !== 0) this.sockets.set(key, sock);
    return sock;
  }

  /** Bootstrap static listeners: bound now (a failure stops startup), serving once the server is live. */
  async addStatic(json: J): Promise<ActiveListener> {
    const bad = validateJson('envoy.config.listener.v3.Listener', json);
    if (bad)
      throw new ConfigError(`static listener '${json.name ?? ''}': Proto constraint validation failed (${bad.chain})`);
    const spec = compileListener(json);
    if (this.static_.has(spec.name))
      throw new ConfigError(`error adding listener: '${spec.name}' duplicate listener name`);
    const sock = await this.socketFor(spec, spec.name);
    const prefix = this.statPrefixFor(spec, sock.port);
    try {
      const hcm = this.makeRuntime(spec, prefix, sock.port, true);
      const l = new ActiveListener(spec, hcm, sock, '', false, prefix, this.deps.stats);
      this.static_.set(spec.name, l);
      this.lm.listener_added.inc();
      this.lm.listener_create_success.inc();
      this.syncRds();
      hcm.ready().then(() => {
        if (this.started) sock.activate(l);
      });
      this.updateGauges();
      return l;
    } catch (err) {
      sock.close();
      this.sockets.delete(sock.key);
      throw err;
    }
  }

  /** Workers start: static listeners take traffic. */
  startWorkers(): void {
    this.started = true;
    this.lm.workers_started.set(1);
    for (const l of this.static_.values()) l.network.ready().then(() => l.socket.current ?? l.socket.activate(l));
    for (const l of this.active.values()) if (!l.socket.current) l.socket.activate(l);
  }

  /** Handles an LDS response (the complete set). Returns the NACK reason, if any. */
  async onLds(resources: DecodedResource[], version: string): Promise<string | undefined> {
    this.lds.update_attempt.inc();
    const now = timestampString(Date.now());
    const errors: string[] = [];
    const seen = new Set<string>();
    if (resources.length === 0) this.lds.update_empty.inc();
    const fail = (r: DecodedResource, msg: string) => {
      errors.push(`${r.name}: ${msg}`);
      this.errors.set(r.name, errorState(TYPE_URL.listener, r.json, msg, version, now));
      this.lm.listener_create_failure.inc();
    };
    for (const r of resources) {
      if (seen.has(r.name)) {
        errors.push(`duplicate listener ${r.name} found`);
        continue;
      }
      seen.add(r.name);
      if (this.static_.has(r.name)) {
        fail(r, `error adding listener: '${r.name}' cannot be updated: it is a static listener`);
        continue;
      }
      const current = this.warming.get(r.name) ?? this.active.get(r.name);
      if (current && (current.spec.json === r.json || sameJson(current.spec.json, r.json))) {
        this.errors.delete(r.name);
        continue;
      }
      let spec: ListenerSpec;
      try {
        const bad = validateJson('envoy.config.listener.v3.Listener', r.json);
        if (bad) throw new ConfigError(`Proto constraint validation failed (${bad.chain})`);
        spec = compileListener(r.json);
      } catch (err) {
        fail(r, (err as Error).message);
        continue;
      }
      let sock: ListenerSocket;
      const prev = this.active.get(r.name);
      const reuse =
        prev &&
        prev.spec.kind === spec.kind &&
        prev.spec.address === spec.address &&
        (prev.spec.port === spec.port || spec.port === 0)
          ? prev.socket
          : undefined;
      // HTTP ↔ HTTPS on the same address (a Gateway listener switching protocol): the TLS server replaces the
      // plaintext one (or back), its socket closed first so the new one can bind; Envoy drains the old listener.
      if (!reuse && prev && this.tlsSwitch(prev, spec)) this.closeSocket(prev.socket);
      try {
        sock = reuse ?? (await this.socketFor(spec, r.name));
      } catch (err) {
        fail(r, (err as Error).message);
        continue;
      }
      const prefix = this.statPrefixFor(spec, sock.port);
      let hcm: NetworkRuntime;
      try {
        hcm = this.makeRuntime(spec, prefix, sock.port, false);
      } catch (err) {
        if (!reuse) this.closeSocket(sock);
        fail(r, (err as Error).message);
        continue;
      }
      const l = new ActiveListener(spec, hcm, sock, version, true, prefix, this.deps.stats);
      const oldWarming = this.warming.get(r.name);
      if (oldWarming && oldWarming.socket !== sock && oldWarming.socket !== prev?.socket)
        this.closeSocket(oldWarming.socket);
      this.warming.set(r.name, l);
      this.errors.delete(r.name);
      this.log.info(`lds: add/update listener '${r.name}'`);
      (prev ? this.lm.listener_modified : this.lm.listener_added).inc();
      this.lm.listener_create_success.inc();
      hcm.ready().then(() => this.finishWarming(l));
    }
    // Listeners missing from the set go, even when part of the update is rejected (Envoy's LdsApiImpl).
    for (const name of [...this.active.keys(), ...this.warming.keys()]) {
      if (seen.has(name)) continue;
      this.remove(name);
    }
    for (const name of [...this.errors.keys()]) if (!seen.has(name)) this.errors.delete(name);
    this.syncRds();
    this.updateGauges();
    if (errors.length > 0) {
      this.lds.update_rejected.inc();
      return `Error adding/updating listener(s) ${errors.join(', ')}`;
    }
    this.lds.update_success.inc();
    this.lds.version.set(Number.parseInt(version, 10) || 0);
    this.ldsVersion = version;
    this.init.responseApplied();
    return undefined;
  }

  private finishWarming(l: ActiveListener): void {
    if (this.warming.get(l.spec.name) !== l) return;
    this.warming.delete(l.spec.name);
    const old = this.active.get(l.spec.name);
    this.active.set(l.spec.name, l);
    if (old && old.socket !== l.socket && ![...this.active.values()].some((a) => a.socket === old.socket)) {
      this.closeSocket(old.socket);
    }
    if (old) old.network.close();
    if (this.started) l.socket.activate(l);
    this.log.debug(`listener '${l.spec.name}' warmed and activated`);
    this.updateGauges();
    this.init.check();
  }

  private remove(name: string): void {
    const l = this.active.get(name) ?? this.warming.get(name);
    this.active.delete(name);
    this.warming.delete(name);
    if (!l) return;
    this.log.info(`lds: removing listener '${name}'`);
    this.lm.listener_removed.inc();
    const stillUsed = [...this.active.values(), ...this.warming.values(), ...this.static_.values()].some(
      (x) => x.socket === l.socket,
    );
    if (!stillUsed) this.closeSocket(l.socket);
    l.network.close();
  }

  private closeSocket(sock: ListenerSocket): void {
    for (const [k, v] of [...this.sockets]) if (v === sock) this.sockets.delete(k);
    if (!sock.closed) sock.close();
  }

  /** The update turns this listener's HTTP socket into an HTTPS one or back, and no other listener uses it. */
  private tlsSwitch(prev: ActiveListener, spec: ListenerSpec): boolean {
    const kinds = new Set([prev.spec.kind, spec.kind]);
    if (kinds.size !== 2 || !kinds.has('http') || !kinds.has('https')) return false;
    if (prev.spec.address !== spec.address || prev.spec.port !== spec.port) return false;
    return ![...this.static_.values(), ...this.active.values(), ...this.warming.values()].some(
      (l) => l.socket === prev.socket && l.spec.name !== spec.name,
    );
  }

  private syncRds(): void {
    const names = new Set<string>();
    for (const l of [...this.static_.values(), ...this.active.values(), ...this.warming.values()]) {
      const hcm = l.hcm;
      if (hcm?.routes.kind === 'rds') names.add(hcm.routes.provider.name);
      for (const n of hcm?.chainRoutes.keys() ?? []) names.add(n);
    }
    this.deps.routes.retain(names);
  }

  private updateGauges(): void {
    this.lm.total_listeners_active.set(this.static_.size + this.active.size);
    this.lm.total_listeners_warming.set(this.warming.size);
  }

  /** The initial fetch timed out or the stream failed: initialization goes on without LDS (Envoy's behaviour). */
  initFetchTimeout(): void {
    this.init.fetchTimedOut();
  }

  /** Resolves when LDS delivered (or timed out) and no listener is warming. */
  initialized(): Promise<void> {
    return this.init.done();
  }

  async close(): Promise<void> {
    const socks = new Set(this.sockets.values());
    await Promise.all([...socks].map((s) => s.shutdown()));
    for (const l of [...this.static_.values(), ...this.active.values(), ...this.warming.values()]) l.network.close();
  }
}

function lmStats(s: StatsStore) {
  return {
    listener_added: s.counter('listener_manager.listener_added'),
    listener_modified: s.counter('listener_manager.listener_modified'),
    listener_removed: s.counter('listener_manager.listener_removed'),
    listener_create_success: s.counter('listener_manager.listener_create_success'),
    listener_create_failure: s.counter('listener_manager.listener_create_failure'),
    total_listeners_active: s.gauge('listener_manager.total_listeners_active'),
    total_listeners_warming: s.gauge('listener_manager.total_listeners_warming'),
    total_listeners_draining: s.gauge('listener_manager.total_listeners_draining'),
    workers_started: s.gauge('listener_manager.workers_started'),
  };
}
