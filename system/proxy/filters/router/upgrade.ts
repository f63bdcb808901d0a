// The router's half of an HTTP/1.1 upgrade (WebSocket), as Envoy's router forwards one (docs intro/arch_overview/
// http/upgrades; source/common/router/router.cc): the request goes upstream on a connection of its own with its
// `Connection: Upgrade` and `Upgrade` headers (the route's rewrites and header mutations applied); a 101 goes
// downstream and the two connections become one tunnel, bytes both ways until either side closes (half-close passed
// on); any other answer is relayed as a response. The route `timeout` (or `x-envoy-upstream-rq-timeout-ms`) bounds
// the wait for the upgrade's answer once the upstream connection is up: none in time is 504 `upstream request timeout`
// (flag UT), and the 101 disarms it, so it never cuts a tunnel (Envoy since envoyproxy/envoy#41075, runtime
// websocket_enable_timeout_on_upgrade_response, now the only behaviour); the route's `idle_timeout`, else the HCM's
// `stream_idle_timeout` (5 min), resets an idle tunnel (flag SI, `downstream_rq_idle_timeout`). Stats
// `downstream_cx_upgrades_total`, `downstream_cx_upgrades_active`.
import http from 'node:http';
import type net from 'node:net';
import { applyMutations } from '../../config/headers.ts';
import type { RouteActionConfig, WeightedCluster } from '../../config/route.ts';
import type { Logger } from '../../log.ts';
import type { Counter, Gauge, StatsStore } from '../../stats.ts';
import type { HeaderMap } from '../../stream-info.ts';
import { strerror } from '../../strerror.ts';
import type { Cluster } from '../../upstream/cluster.ts';
import {
  armConnectTimeout,
  CONNECT_TIMEOUT,
  countConnectionClosed,
  countConnectionOpened,
} from '../../upstream/connection-stats.ts';
import type { Host } from '../../upstream/host.ts';
import type { DownstreamUpgrade, FilterStream } from '../filter-api.ts';
import { rewriteUpstream } from './rewrites.ts';

export interface UpgradeStats {
  downstream_cx_upgrades_total: Counter;
  downstream_cx_upgrades_active: Gauge;
  downstream_rq_idle_timeout: Counter;
}

/** What the router hands an upgrade: its logger and settings, the HCM's upgrade stats. */
export interface UpgradeContext {
  log: Logger;
  suppressEnvoyHeaders: boolean;
  stats: UpgradeStats;
}

/** The connection manager's upgrade stats, `http.<stat_prefix>.` (the same counters hcm-stats.ts names). */
export function upgradeStats(stats: StatsStore, prefix: string): UpgradeStats {
  return {
    downstream_cx_upgrades_total: stats.counter(`${prefix}downstream_cx_upgrades_total`),
    downstream_cx_upgrades_active: stats.gauge(`${prefix}downstream_cx_upgrades_active`),
    downstream_rq_idle_timeout: stats.counter(`${prefix}downstream_rq_idle_timeout`),
  };
}

/**
 * Request headers of an upgrade as they go upstream (the router's rewrites and mutations, Upgrade and Connection), and
 * the route timeout in effect (`x-envoy-upstream-rq-timeout-ms` overrides it, and never goes upstream).
 */
function upstreamHeaders(
  s: FilterStream,
  a: RouteActionConfig,
  weighted: WeightedCluster | undefined,
  suppress: boolean,
): { path: string; h: HeaderMap; timeoutMs: number } {
  const h = s.headers;
  const override = h['x-envoy-upstream-rq-timeout-ms'];
  const timeoutMs = typeof override === 'string' && /^\d+$/.test(override) ? Number(override) : a.timeoutMs;
  delete h['x-envoy-upstream-rq-timeout-ms'];
  delete h['x-envoy-upstream-rq-per-try-timeout-ms'];
  const path = rewriteUpstream(s, h, a, weighted);
  if (!suppress && timeoutMs > 0) h['x-envoy-expected-rq-timeout-ms'] = String(timeoutMs);
  applyMutations(h, s.route!.requestMutations, s.info);
  if (weighted) applyMutations(h, [weighted.requestMutation], s.info);
  const original = s.info.requestHeaders.upgrade;
  h.upgrade = Array.isArray(original) ? original[0]! : (original ?? '');
  h.connection = 'Upgrade';
  for (const k in h) if (h[k] === undefined) delete h[k];
  return { path, h, timeoutMs };
}

/** The upstream connection's place in the cluster's and host's stats; `onConnect` once it is up. */
function countConnection(cluster: Cluster, host: Host, req: http.ClientRequest, onConnect: () => void): void {
  const c = cluster.stats;
  const opened = performance.now();
  countConnectionOpened(c, host, 'http1');
  req.on('socket', (sock: net.Socket) => {
    sock.setNoDelay(true);
    sock.once('connect', () => {
      c.upstream_cx_connect_ms.record(performance.now() - opened);
      onConnect();
    });
    sock.once('close', () => countConnectionClosed(c, host, opened));
  });
}

/**
 * The router's half of an upgrade: a host of `cluster`, a connection of its own to it (the cluster's connect
 * timeout and upstream_cx_* stats), the request, then either a tunnel (101) or the response relayed.
 */
export function forwardUpgrade(
  ctx: UpgradeContext,
  s: FilterStream & { upgrade: DownstreamUpgrade },
  action: RouteActionConfig,
  cluster: Cluster,
  weighted: WeightedCluster | undefined,
): void {
  const host = cluster.chooseHost();
  if (!host) {
    cluster.stats.upstream_cx_none_healthy.inc();
    s.sendLocalReply(503, 'no healthy upstream', { flag: 'UH', details: 'no_healthy_upstream', routeMutations: true });
    return;
  }
  s.info.upstreamHost = host.key;
  s.info.attemptCount++;
  const { path, h, timeoutMs } = upstreamHeaders(s, action, weighted, ctx.suppressEnvoyHeaders);
  const answer = { s, cluster, opened: performance.now(), weighted, suppress: ctx.suppressEnvoyHeaders };
  const c = cluster.stats;
  let connected = false;
  let answerTimer: NodeJS.Timeout | undefined;
  c.upstream_rq_total.inc();
  host.stats.rq_total++;
  const req = http.request({
    host: host.address,
    port: host.port,
    method: s.method,
    path,
    headers: h as http.OutgoingHttpHeaders,
    agent: false,
    setHost: false,
  });
  const connectTimer = armConnectTimeout(c, cluster.connectTimeoutMs, req);
  countConnection(cluster, host, req, () => {
    clearTimeout(connectTimer);
    connected = true;
    if (timeoutMs > 0) {
      answerTimer = setTimeout(() => {
        c.upstream_rq_timeout.inc();
        host.stats.rq_timeout++;
        s.setFlag('UT');
        cluster.chargeCode(504);
        s.sendLocalReply(504, 'upstream request timeout', { details: 'response_timeout', routeMutations: true });
        req.destroy();
      }, timeoutMs);
    }
  });
  const gone = s.onDownstreamGone(() => req.destroy());
  const answered = () => {
    clearTimeout(answerTimer);
    gone();
  };
  req.on('error', (err: NodeJS.ErrnoException) => {
    clearTimeout(connectTimer);
    answered();
    if (s.done) return;
    if (!connected) {
      c.upstream_cx_connect_fail.inc();
      host.stats.cx_connect_fail++;
      const detail =
        err.code === CONNECT_TIMEOUT ? 'connection timeout' : `delayed connect error: ${strerror(err) ?? err.code}`;
      s.info.upstreamTransportFailureReason = detail;
      const why =
        err.code === CONNECT_TIMEOUT ? detail : `remote connection failure, transport failure reason: ${detail}`;
      resetReply(s, cluster, 'UF', why);
      return;
    }
    resetReply(s, cluster, 'UC', 'connection termination');
  });
  req.on('response', (res) => {
    answered();
    relayResponse(answer, res);
  });
  req.on('upgrade', (res, up: net.Socket, upHead: Buffer) => {
    answered();
    if (s.done) {
      up.destroy();
      return;
    }
    cluster.chargeCode(101);
    const out = responseHeaders(answer, res);
    out.upgrade = res.headers.upgrade ?? h.upgrade;
    out.connection = 'Upgrade';
    s.info.responseCodeDetails = 'via_upstream';
    s.writeHeaders(101, out, true);
    s.finishWith();
    tunnel(ctx, s, up, upHead);
  });
  req.end();
}

/** What the answer of an upgrade request is written with. */
interface Answer {
  s: FilterStream;
  cluster: Cluster;
  opened: number;
  weighted: WeightedCluster | undefined;
  suppress: boolean;
}

/** Response headers downstream: hop-by-hop ones dropped, Envoy's, the route's and the weighted cluster's mutations. */
function responseHeaders({ s, opened, weighted, suppress }: Answer, res: http.IncomingMessage): HeaderMap {
  const out: HeaderMap = {};
  for (const k in res.headers) {
    if (k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding' && k !== 'upgrade') {
      out[k] = res.headers[k];
    }
  }
  const serviceMs = Math.round(performance.now() - opened);
  s.info.upstreamServiceTime = serviceMs;
  s.info.firstUpstreamRxMono = performance.now();
  if (!suppress) out['x-envoy-upstream-service-time'] = String(serviceMs);
  applyMutations(out, s.route!.responseMutations, s.info);
  if (weighted) applyMutations(out, [weighted.responseMutation], s.info);
  return out;
}

/** The upstream refused the upgrade (any status but 101): its response goes downstream as it is. */
function relayResponse(answer: Answer, res: http.IncomingMessage): void {
  const { s, cluster } = answer;
  const status = res.statusCode ?? 502;
  cluster.chargeCode(status);
  cluster.stats.upstream_rq_completed.inc();
  if (s.done) {
    res.destroy();
    return;
  }
  s.info.responseCodeDetails = 'via_upstream';
  s.writeHeaders(status, responseHeaders(answer, res), true);
  res.on('data', (chunk: Buffer) => {
    if (!s.write(chunk)) {
      res.pause();
      s.whenDrained(() => res.resume());
    }
  });
  res.on('end', () => s.finishWith());
  res.on('error', () => s.resetDownstream());
}

function resetReply(s: FilterStream, cluster: Cluster, flag: 'UF' | 'UC', why: string): void {
  cluster.chargeCode(503);
  s.sendLocalReply(503, `upstream connect error or disconnect/reset before headers. reset reason: ${why}`, {
    flag,
    details: `upstream_reset_before_response_started{${why.replace(/ /g, '_')}}`,
    routeMutations: true,
  });
}

/** After the 101: bytes both ways (half-close passed on, flow control by pipe) until both sides are closed. */
function tunnel(ctx: UpgradeContext, s: FilterStream & { upgrade: DownstreamUpgrade }, up: net.Socket, upHead: Buffer) {
  const down = s.upgrade.socket;
  const { stats } = ctx;
  stats.downstream_cx_upgrades_total.inc();
  stats.downstream_cx_upgrades_active.add(1);
  if (ctx.log.on('debug')) ctx.log.debug('upgrade accepted: tunnelling', s.tags);
  const idleMs =
    (s.route?.action.kind === 'route' ? s.route.action.idleTimeoutMs : undefined) ??
    s.upgrade.streamIdleTimeoutMs ??
    300_000;
  let idle: NodeJS.Timeout | undefined;
  const touch = () => idle?.refresh();
  if (idleMs > 0) {
    idle = setTimeout(() => {
      stats.downstream_rq_idle_timeout.inc();
      s.setFlag('SI');
      down.destroy();
      up.destroy();
    }, idleMs);
    idle.unref();
  }
  let open = 2;
  const closed = () => {
    if (--open > 0) return;
    if (idle) clearTimeout(idle);
    stats.downstream_cx_upgrades_active.sub(1);
  };
  down.once('close', () => {
    up.destroy();
    closed();
  });
  up.once('close', () => {
    down.destroy();
    closed();
  });
  down.on('error', () => down.destroy());
  up.on('error', () => up.destroy());
  down.on('data', (d: Buffer) => {
    s.info.bytesReceived += d.length;
    touch();
  });
  up.on('data', (d: Buffer) => {
    s.info.bytesSent += d.length;
    touch();
  });
  if (upHead.length > 0) {
    s.info.bytesSent += upHead.length;
    down.write(upHead);
  }
  if (s.upgrade.head.length > 0) {
    s.info.bytesReceived += s.upgrade.head.length;
    up.write(s.upgrade.head);
  }
  down.pipe(up);
  up.pipe(down);
}
