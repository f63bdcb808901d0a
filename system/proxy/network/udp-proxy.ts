// The udp_proxy listener filter (envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig) on node:dgram, as
// Envoy's docs (configuration/listeners/udp_filters/udp_proxy) describe it: a session per downstream address
// (source IP and port), each with its own upstream socket to one host the cluster's load balancer picked when the
// session began; datagrams both ways; a session ends after `idle_timeout` (1 min by default) without a datagram
// either way. The cluster comes from `matcher.on_no_match` (a Route action: what an unconditional matcher says) or
// the deprecated `cluster`. No cluster: `downstream_sess_no_route`, the datagram is dropped; no healthy host:
// the cluster's `upstream_cx_none_healthy`. Stats under `udp.<stat_prefix>.` and `cluster.<name>.udp.` (Envoy's).
// Not implemented (NACKed): matchers with conditions, session filters, hash policies, use_original_src_ip,
// per-packet load balancing, access logs.
import dgram from 'node:dgram';
import net from 'node:net';
import { ConfigError, durationMs } from '../config/errors.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { Counter, Gauge, StatsStore } from '../stats.ts';
import type { ClusterManagerView } from '../upstream/cluster-manager-view.ts';
import type { Host } from '../upstream/host.ts';

type J = Record<string, any>;

const ROUTE_TYPE = 'envoy.extensions.filters.udp.udp_proxy.v3.Route';

export interface UdpProxyConfig {
  statPrefix: string;
  cluster: string;
  idleTimeoutMs: number;
}

const typeName = (any: J | undefined) => {
  const url = String(any?.['@type'] ?? '');
  return url.slice(url.lastIndexOf('/') + 1);
};

export function compileUdpProxy(j: J): UdpProxyConfig {
  for (const f of ['session_filters', 'hash_policies', 'access_log', 'proxy_access_log']) {
    if (Array.isArray(j[f]) && j[f].length) throw new ConfigError(`udp_proxy: ${f} is not supported`);
  }
  if (j.use_original_src_ip) throw new ConfigError('udp_proxy: use_original_src_ip is not supported');
  if (j.use_per_packet_load_balancing)
    throw new ConfigError('udp_proxy: use_per_packet_load_balancing is not supported');
  let cluster = j.cluster ? String(j.cluster) : '';
  if (j.matcher) {
    const m = j.matcher as J;
    if (m.matcher_list || m.matcher_tree)
      throw new ConfigError('udp_proxy: matchers with conditions are not supported (only on_no_match)');
    const action = m.on_no_match?.action?.typed_config;
    if (typeName(action) !== ROUTE_TYPE) {
      throw new ConfigError(`udp_proxy: matcher.on_no_match.action must be a ${ROUTE_TYPE}`);
    }
    cluster = String(action.cluster ?? '');
  }
  if (!cluster) throw new ConfigError('udp_proxy: cluster or matcher is required');
  return { statPrefix: String(j.stat_prefix ?? ''), cluster, idleTimeoutMs: durationMs(j.idle_timeout) ?? 60_000 };
}

export interface UdpProxyDeps {
  stats: StatsStore;
  logs: LogRegistry;
  clusters: ClusterManagerView;
}

const COUNTERS = [
  'downstream_sess_total',
  'downstream_sess_no_route',
  'downstream_sess_rx_bytes',
  'downstream_sess_rx_datagrams',
  'downstream_sess_rx_errors',
  'downstream_sess_tx_bytes',
  'downstream_sess_tx_datagrams',
  'downstream_sess_tx_errors',
  'idle_timeout',
] as const;

interface Session {
  upstream: dgram.Socket;
  idle: NodeJS.Timeout;
  cluster: string;
  /** The host the session sends to, picked when it began. */
  host: Host;
}

/** One UDP listener's udp_proxy: its sessions by downstream address. */
export class UdpProxy {
  readonly config: UdpProxyConfig;
  readonly kind = 'udp' as const;
  private readonly deps: UdpProxyDeps;
  private readonly log: Logger;
  private readonly stats: Record<(typeof COUNTERS)[number], Counter> & { downstream_sess_active: Gauge };
  readonly sessions = new Map<string, Session>();

  constructor(config: UdpProxyConfig, deps: UdpProxyDeps) {
    this.config = config;
    this.deps = deps;
    this.log = deps.logs.logger('filter');
    this.stats = deps.stats.group(`udp.${config.statPrefix}.`, COUNTERS, ['downstream_sess_active'] as const);
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }
  onNewConnection(): void {}
  onConnectionClosed(): void {}

  /** Ends every session (the listener goes or is replaced). */
  close(): void {
    for (const k of [...this.sessions.keys()]) this.endSession(k);
  }

  /** A datagram from `from` on the listener's socket `down`. */
  onDatagram(down: dgram.Socket, msg: Buffer, from: dgram.RemoteInfo): void {
    const s = this.stats;
    s.downstream_sess_rx_datagrams.inc();
    s.downstream_sess_rx_bytes.inc(msg.length);
    const key = `${from.address}:${from.port}`;
    const session = this.sessions.get(key) ?? this.newSession(down, from, key);
    if (!session) return;
    session.idle.refresh();
    const cluster = this.deps.clusters.get(session.cluster);
    const host = session.host;
    session.upstream.send(msg, host.port, host.address, (err) => {
      const c = cluster?.counter(err ? 'udp.sess_tx_errors' : 'udp.sess_tx_datagrams');
      c?.inc();
    });
  }

  private newSession(down: dgram.Socket, from: dgram.RemoteInfo, key: string): Session | undefined {
    const name = this.config.cluster;
    const cluster = this.deps.clusters.get(name);
    if (!cluster) {
      this.stats.downstream_sess_no_route.inc();
      this.log.debug(`udp proxy: cluster ${name} not found, datagram from ${key} dropped`);
      return undefined;
    }
    const host = cluster.chooseHost();
    if (!host) {
      cluster.stats.upstream_cx_none_healthy.inc();
      this.log.debug(`udp proxy: no healthy host in cluster ${name}, datagram from ${key} dropped`);
      return undefined;
    }
    const upstream = dgram.createSocket(net.isIPv6(host.address) ? 'udp6' : 'udp4');
    upstream.on('error', () => cluster.counter('udp.sess_rx_errors').inc());
    upstream.on('message', (reply, rinfo) => {
      if (rinfo.address !== host.address || rinfo.port !== host.port) return;
      cluster.counter('udp.sess_rx_datagrams').inc();
      const sess = this.sessions.get(key);
      sess?.idle.refresh();
      down.send(reply, from.port, from.address, (err) => {
        if (err) this.stats.downstream_sess_tx_errors.inc();
        else {
          this.stats.downstream_sess_tx_datagrams.inc();
          this.stats.downstream_sess_tx_bytes.inc(reply.length);
        }
      });
    });
    const idle = setTimeout(() => {
      this.stats.idle_timeout.inc();
      this.log.debug(`udp proxy: session from ${key} idle for ${this.config.idleTimeoutMs}ms, closed`);
      this.endSession(key);
    }, this.config.idleTimeoutMs);
    idle.unref();
    const session: Session = { upstream, idle, cluster: name, host };
    this.sessions.set(key, session);
    this.stats.downstream_sess_total.inc();
    this.stats.downstream_sess_active.add(1);
    this.log.debug(`udp proxy: new session from ${key} to ${host.key}`);
    return session;
  }

  private endSession(key: string): void {
    const s = this.sessions.get(key);
    if (!s) return;
    this.sessions.delete(key);
    clearTimeout(s.idle);
    s.upstream.close();
    this.stats.downstream_sess_active.sub(1);
  }
}
