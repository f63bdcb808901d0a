// The tcp_proxy network filter (envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy), as Envoy's
// source/common/tcp_proxy/tcp_proxy.cc behaves: per downstream connection a cluster (`cluster`, or one of
// `weighted_clusters` picked at random by weight), a host from its load balancer, one upstream connection (the
// cluster's connect_timeout; `max_connect_attempts` 1), then bytes both ways with half-close (a FIN is passed on, the
// other direction keeps flowing) and the idle timeout (`idle_timeout`, 1 h by default, 0 disables: no bytes either
// way closes both). No cluster: `downstream_cx_no_route` and the connection is closed; no healthy host:
// `upstream_cx_none_healthy`; connect failure or timeout: the downstream connection is closed. Stats under
// `tcp.<stat_prefix>.` (Envoy's config_network_filters_tcp_proxy stats) and the cluster's upstream_cx_* stats.
// Not implemented (NACKed): tunneling_config, on_demand, hash_policy, access logs, metadata_match, max_connect_attempts
// above 1.
import net from 'node:net';
import { ConfigError, durationMs } from '../config/errors.ts';
import { pickWeighted } from '../config/weighted-pick.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { Counter, Gauge, StatsStore } from '../stats.ts';
import type { Cluster } from '../upstream/cluster.ts';
import type { ClusterManagerView } from '../upstream/cluster-manager-view.ts';
import { armConnectTimeout, countConnectionClosed, countConnectionOpened } from '../upstream/connection-stats.ts';
import type { Host } from '../upstream/host.ts';

type J = Record<string, any>;

export interface TcpProxyConfig {
  statPrefix: string;
  clusters: { name: string; weight: number }[];
  /** 0: none. */
  idleTimeoutMs: number;
}

const UNSUPPORTED = ['tunneling_config', 'on_demand', 'hash_policy', 'access_log', 'metadata_match'];

export function compileTcpProxy(j: J): TcpProxyConfig {
  for (const f of UNSUPPORTED) {
    const v = j[f];
    if (v !== undefined && !(Array.isArray(v) && v.length === 0)) {
      throw new ConfigError(`tcp_proxy: ${f} is not supported`);
    }
  }
  if (Number(j.max_connect_attempts ?? 1) > 1)
    throw new ConfigError('tcp_proxy: max_connect_attempts > 1 is not supported');
  const statPrefix = String(j.stat_prefix ?? '');
  const weighted = (j.weighted_clusters?.clusters ?? []) as J[];
  const clusters = j.cluster
    ? [{ name: String(j.cluster), weight: 1 }]
    : weighted.map((c) => ({ name: String(c.name), weight: Number(c.weight ?? 0) }));
  if (!clusters.length) throw new ConfigError('tcp_proxy: cluster or weighted_clusters is required');
  return { statPrefix, clusters, idleTimeoutMs: durationMs(j.idle_timeout) ?? 3_600_000 };
}

export interface TcpProxyDeps {
  stats: StatsStore;
  logs: LogRegistry;
  clusters: ClusterManagerView;
}

const COUNTERS = [
  'downstream_cx_total',
  'downstream_cx_no_route',
  'downstream_cx_tx_bytes_total',
  'downstream_cx_rx_bytes_total',
  'downstream_flow_control_paused_reading_total',
  'downstream_flow_control_resumed_reading_total',
  'idle_timeout',
  'max_downstream_connection_duration',
  'upstream_flush_total',
] as const;
const GAUGES = ['downstream_cx_tx_bytes_buffered', 'downstream_cx_rx_bytes_buffered', 'upstream_flush_active'] as const;

/** One listener's tcp_proxy: the config and its stats, and the connections it proxies. */
export class TcpProxy {
  readonly config: TcpProxyConfig;
  readonly kind = 'tcp' as const;
  private readonly deps: TcpProxyDeps;
  private readonly log: Logger;
  private readonly stats: Record<(typeof COUNTERS)[number], Counter> & Record<(typeof GAUGES)[number], Gauge>;
  private readonly open = new Set<net.Socket>();

  constructor(config: TcpProxyConfig, deps: TcpProxyDeps) {
    this.config = config;
    this.deps = deps;
    this.log = deps.logs.logger('filter');
    this.stats = deps.stats.group(`tcp.${config.statPrefix}.`, COUNTERS, GAUGES);
  }

  /** Nothing to wait for: no route configuration. */
  ready(): Promise<void> {
    return Promise.resolve();
  }

  onNewConnection(): void {}
  onConnectionClosed(): void {}

  /** Stops proxying: every connection it opened upstream closes (their downstream ones with them). */
  close(): void {
    for (const u of this.open) u.destroy();
  }

  private pickCluster(): string {
    return pickWeighted(this.config.clusters).name;
  }

  /** A new downstream connection (paused until its upstream connects). */
  handle(down: net.Socket, connectionId: number): void {
    const tags = { ConnectionId: connectionId };
    this.stats.downstream_cx_total.inc();
    this.log.debug('new tcp proxy session', tags);
    const name = this.pickCluster();
    const cluster = this.deps.clusters.get(name);
    if (!cluster) {
      this.stats.downstream_cx_no_route.inc();
      this.log.debug(`Cluster not found ${name} and no on demand cluster set.`, tags);
      down.destroy();
      return;
    }
    const host = cluster.chooseHost();
    if (!host) {
      cluster.stats.upstream_cx_none_healthy.inc();
      this.log.debug(`no healthy host for cluster ${name}`, tags);
      down.destroy();
      return;
    }
    this.log.debug(`Creating connection to cluster ${name}`, tags);
    down.pause();
    const up = net.connect({ host: host.address, port: host.port, allowHalfOpen: true, noDelay: true });
    this.open.add(up);
    new Session(this, cluster, host, down, up);
  }

  /** For Session: the stats and settings it reports into. */
  get s() {
    return this.stats;
  }
  forget(up: net.Socket): void {
    this.open.delete(up);
  }
}

/** One proxied connection: the upstream connect, the byte pumps both ways, half-close, idle timeout and the stats. */
class Session {
  private connected = false;
  private idle: NodeJS.Timeout | undefined;
  private readonly opened = performance.now();
  private readonly proxy: TcpProxy;
  private readonly cluster: Cluster;
  private readonly host: Host;
  private readonly down: net.Socket;
  private readonly up: net.Socket;

  constructor(proxy: TcpProxy, cluster: Cluster, host: Host, down: net.Socket, up: net.Socket) {
    this.proxy = proxy;
    this.cluster = cluster;
    this.host = host;
    this.down = down;
    this.up = up;
    const c = cluster.stats;
    countConnectionOpened(c, host);
    const timer = armConnectTimeout(c, cluster.connectTimeoutMs, up);
    up.once('connect', () => {
      clearTimeout(timer);
      this.connected = true;
      c.upstream_cx_connect_ms.record(performance.now() - this.opened);
      this.pump();
    });
    up.on('error', () => {
      clearTimeout(timer);
      if (!this.connected) {
        c.upstream_cx_connect_fail.inc();
        host.stats.cx_connect_fail++;
      }
      down.destroy();
    });
    down.on('error', () => up.destroy());
    up.once('close', () => this.upstreamClosed());
    down.once('close', () => this.downstreamClosed());
  }

  private pump(): void {
    const { down, up } = this;
    const s = this.proxy.s;
    const tx = this.cluster.counter('upstream_cx_tx_bytes_total');
    const rx = this.cluster.counter('upstream_cx_rx_bytes_total');
    down.on('data', (d: Buffer) => {
      s.downstream_cx_rx_bytes_total.inc(d.length);
      tx.inc(d.length);
      this.resetIdle();
    });
    up.on('data', (d: Buffer) => {
      s.downstream_cx_tx_bytes_total.inc(d.length);
      rx.inc(d.length);
      this.resetIdle();
    });
    // pipe() passes each side's FIN on as end() of the other (half-close: allowHalfOpen on both sockets) and
    // pauses a side while the other cannot take more (flow control).
    down.pipe(up);
    up.pipe(down);
    down.resume();
    this.resetIdle();
  }

  private resetIdle(): void {
    const ms = this.proxy.config.idleTimeoutMs;
    if (ms <= 0) return;
    if (this.idle) this.idle.refresh();
    else {
      this.idle = setTimeout(() => {
        this.proxy.s.idle_timeout.inc();
        this.down.destroy();
        this.up.destroy();
      }, ms);
      this.idle.unref();
    }
  }

  /** The downstream side is gone: what is buffered for upstream is flushed (Envoy's upstream_flush_*), then it ends. */
  private downstreamClosed(): void {
    const { up } = this;
    if (!this.connected || up.destroyed) {
      up.destroy();
      return;
    }
    if (up.writableLength > 0) {
      this.proxy.s.upstream_flush_total.inc();
      this.proxy.s.upstream_flush_active.add(1);
      up.once('drain', () => {
        this.proxy.s.upstream_flush_active.sub(1);
        up.end();
      });
    } else up.end();
  }

  /** The upstream side is gone: what it sent is flushed to downstream, then downstream ends. */
  private upstreamClosed(): void {
    if (this.idle) clearTimeout(this.idle);
    this.proxy.forget(this.up);
    countConnectionClosed(this.cluster.stats, this.host, this.opened);
    if (!this.down.destroyed) this.down.end();
  }
}
