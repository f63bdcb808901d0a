// One routed request to a cluster (the forwarding half of Envoy's router filter, source/common/router/router.cc):
// Envoy's upstream request headers (timeouts, original path, attempt count), path and host rewrites, request
// header mutations, mirrors, the route and per-try timeouts, retries with back-off under the retry circuit
// breaker, the response headers and body downstream, and the local replies Envoy's router sends when upstream gives
// no answer (503 with the reset reason, 504 upstream request timeout). Each try is an Attempt (attempt.ts).
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { inFraction } from '../../config/errors.ts';
import { requestHash } from '../../config/hash-policy.ts';
import { applyMutations } from '../../config/headers.ts';
import type { RetryPolicy, RouteActionConfig, WeightedCluster } from '../../config/route.ts';
import type { Logger } from '../../log.ts';
import type { Counter } from '../../stats.ts';
import { type HeaderMap, headerLines } from '../../stream-info.ts';
import { sendBuffered } from '../../upstream/async-client.ts';
import type { Cluster } from '../../upstream/cluster.ts';
import type { ClusterManagerView } from '../../upstream/cluster-manager-view.ts';
import type { PoolFailure } from '../../upstream/pool.ts';
import type { FilterStream } from '../filter-api.ts';
import { Attempt, type AttemptOwner } from './attempt.ts';
import { backoffMs, retriableStatus, retryOnReset } from './retry-state.ts';
import { rewriteUpstream, shadowHost } from './rewrites.ts';
import type { UpgradeContext } from './upgrade.ts';

const CONNECT_ERROR = 'upstream connect error or disconnect/reset before headers. reset reason: ';

/** Response headers that never go downstream as received. */
const RESPONSE_HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** Envoy's router statistics, http.<stat_prefix>.* (Router::FilterConfig's ALL_ROUTER_STATS). */
export interface RouterStats {
  no_route: Counter;
  no_cluster: Counter;
  rq_redirect: Counter;
  rq_direct_response: Counter;
  rq_total: Counter;
  rq_reset_after_downstream_response_started: Counter;
}

/** One router filter's configuration and what it works with (Envoy's Router::FilterConfig). */
export interface RouterContext {
  readonly clusters: ClusterManagerView;
  /** The `router` logger. */
  readonly log: Logger;
  readonly stats: RouterStats;
  /** Router.suppress_envoy_headers: no x-envoy-expected-rq-timeout-ms, x-envoy-upstream-service-time. */
  readonly suppressEnvoyHeaders: boolean;
  /** What an upgrade request needs (http/upgrade.ts). */
  readonly upgrade: UpgradeContext;
}

/** One routed request to a cluster: attempts, retries, timeouts and the response stream. */
export class UpstreamCall implements AttemptOwner {
  private readonly router: RouterContext;
  private readonly s: FilterStream;
  private readonly action: RouteActionConfig;
  private readonly cluster: Cluster;
  private readonly weighted: WeightedCluster | undefined;
  private readonly retry: RetryPolicy | undefined;
  private timeoutMs: number;
  private perTryTimeoutMs: number;
  private globalTimer: NodeJS.Timeout | undefined;
  private tryTimer: NodeJS.Timeout | undefined;
  private retries = 0;
  private retryHeld = false;
  private attempt: Attempt | undefined;
  private finished = false;
  private path: string;
  private headers: HeaderMap;
  /** The request body streamed upstream (start()), when it is not buffered. */
  private bodyStream: Readable | undefined;

  constructor(
    router: RouterContext,
    s: FilterStream,
    action: RouteActionConfig,
    cluster: Cluster,
    weighted: WeightedCluster | undefined,
  ) {
    this.router = router;
    this.s = s;
    this.action = action;
    this.cluster = cluster;
    this.weighted = weighted;
    this.retry = action.retry;
    this.headers = s.headers;
    this.path = s.path;
    this.timeoutMs = action.timeoutMs;
    this.perTryTimeoutMs = action.retry?.perTryTimeoutMs ?? 0;
  }

  start(): void {
    const s = this.s;
    const h = this.headers;
    const a = this.action;
    const suppress = this.router.suppressEnvoyHeaders;
    // x-envoy-upstream-rq-timeout-ms and -per-try-timeout-ms override the route's timeouts (and never go upstream).
    const rqTimeout = h['x-envoy-upstream-rq-timeout-ms'];
    if (typeof rqTimeout === 'string' && /^\d+$/.test(rqTimeout)) this.timeoutMs = Number(rqTimeout);
    const perTry = h['x-envoy-upstream-rq-per-try-timeout-ms'];
    if (typeof perTry === 'string' && /^\d+$/.test(perTry)) this.perTryTimeoutMs = Number(perTry);
    delete h['x-envoy-upstream-rq-timeout-ms'];
    delete h['x-envoy-upstream-rq-per-try-timeout-ms'];
    this.path = rewriteUpstream(s, h, a, this.weighted);
    const expected =
      this.perTryTimeoutMs > 0 && (this.timeoutMs === 0 || this.perTryTimeoutMs < this.timeoutMs)
        ? this.perTryTimeoutMs
        : this.timeoutMs;
    if (!suppress && expected > 0) h['x-envoy-expected-rq-timeout-ms'] = String(expected);
    applyMutations(h, s.route!.requestMutations, s.info);
    if (this.weighted) applyMutations(h, [this.weighted.requestMutation], s.info);
    const log = this.router.log;
    if (log.on('debug')) {
      log.debug(
        `router decoding headers:\n${headerLines(undefined, h, [
          [':authority', String(h.host ?? '')],
          [':path', this.path],
          [':method', s.method],
          [':scheme', s.scheme],
        ])}`,
        s.tags,
      );
    }
    s.onDownstreamGone(() => this.onDownstreamGone());
    const go = () => {
      if (s.done) return;
      // Envoy starts the route timeout once the whole request has been received.
      this.armGlobalTimeout();
      this.sendMirrors();
      this.startAttempt();
    };
    // A body nothing needs whole (no retries, no mirrors) is streamed upstream as it arrives, as Envoy does: a gRPC
    // bidirectional stream needs it. The route timeout then starts when its last byte has arrived.
    const stream = !this.retry && this.action.mirrors.length === 0 ? s.requestStream() : undefined;
    if (stream) {
      this.bodyStream = stream;
      stream.once('end', () => this.armGlobalTimeout());
      this.startAttempt();
      return;
    }
    if (s.hasBody()) {
      s.readBody().then(go, () => s.sendLocalReply(413, 'Payload Too Large', { details: 'request_payload_too_large' }));
    } else {
      s.info.lastDownstreamRxMono = performance.now();
      go();
    }
  }

  private armGlobalTimeout(): void {
    if (this.timeoutMs > 0 && !this.finished && !this.globalTimer) {
      this.globalTimer = setTimeout(() => this.onGlobalTimeout(), this.timeoutMs);
    }
  }

  private startAttempt(): void {
    const s = this.s;
    const c = this.cluster;
    s.info.attemptCount++;
    if (this.action.includeAttemptCount) this.headers['x-envoy-attempt-count'] = String(s.info.attemptCount);
    if (!c.resources.canRequest()) {
      c.stats.upstream_rq_pending_overflow.inc();
      this.fail('overflow', 'overflow');
      return;
    }
    const hp = this.action.hashPolicy;
    const host = c.chooseHost(
      hp ? requestHash(hp, { header: s.header, remote: s.info.downstreamRemote, path: s.path }) : undefined,
    );
    if (!host) {
      c.stats.upstream_cx_none_healthy.inc();
      this.finish();
      s.sendLocalReply(503, 'no healthy upstream', {
        flag: 'UH',
        details: 'no_healthy_upstream',
        routeMutations: true,
      });
      return;
    }
    s.info.upstreamHost = host.key;
    const attempt = new Attempt(this, host);
    this.attempt = attempt;
    if (this.perTryTimeoutMs > 0) {
      this.tryTimer = setTimeout(() => this.onPerTryTimeout(attempt), this.perTryTimeoutMs);
    }
    attempt.pool = c.pool(host);
    attempt.pending = attempt.pool.newStream(
      {
        onReady: (conn) => attempt.onPoolReady(conn),
        onFailure: (reason, detail) => {
          if (attempt !== this.attempt) return;
          this.fail(reason, detail);
        },
      },
      s.tags,
    );
  }

  /** Builds the upstream request of an attempt. */
  requestFor(): Dispatcher.DispatchOptions {
    const s = this.s;
    const cases = s.info.requestHeaderCase;
    return {
      path: this.path,
      method: s.method as Dispatcher.HttpMethod,
      headers: (cases?.size && !this.cluster.spec.http2 ? withCase(this.headers, cases) : this.headers) as Record<
        string,
        string | string[]
      >,
      body: this.bodyStream ?? s.body ?? null,
    };
  }

  get stream(): FilterStream {
    return this.s;
  }

  get log(): Logger {
    return this.router.log;
  }

  get upstreamCluster(): Cluster {
    return this.cluster;
  }

  /** Called by an attempt when its response headers arrive. Returns false when the response is discarded. */
  onResponseHeaders(attempt: Attempt, status: number, headers: HeaderMap, endStream = false): boolean {
    if (attempt !== this.attempt || this.finished) return false;
    const s = this.s;
    if (this.tryTimer) clearTimeout(this.tryTimer);
    this.cluster.reportResult(attempt.host, status);
    if (this.retry && retriableStatus(this.retry, status) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry(`upstream response ${status}`);
      return false;
    }
    if (this.retry && retriableStatus(this.retry, status) && this.retries >= this.retry.numRetries) {
      this.cluster.stats.upstream_rq_retry_limit_exceeded.inc();
      s.setFlag('URX');
    }
    if (this.retries > 0) this.cluster.stats.upstream_rq_retry_success.inc();
    const out: HeaderMap = {};
    for (const k in headers) if (!RESPONSE_HOP_BY_HOP.has(k)) out[k] = headers[k];
    const serviceMs = Math.round(performance.now() - attempt.startedAt);
    s.info.upstreamServiceTime = serviceMs;
    s.info.firstUpstreamRxMono = performance.now();
    if (!this.router.suppressEnvoyHeaders) out['x-envoy-upstream-service-time'] = String(serviceMs);
    if (this.action.includeAttemptCountInResponse) out['x-envoy-attempt-count'] = String(s.info.attemptCount);
    applyMutations(out, s.route!.responseMutations, s.info);
    if (this.weighted) applyMutations(out, [this.weighted.responseMutation], s.info);
    s.info.responseCodeDetails = 'via_upstream';
    s.writeHeaders(status, out, true, endStream);
    return true;
  }

  onResponseComplete(attempt: Attempt, status: number, trailers: HeaderMap | undefined): void {
    if (attempt !== this.attempt) return;
    this.chargeResponse(status, attempt);
    this.finish();
    this.s.finishWith(undefined, trailers);
  }

  /** The attempt's upstream stream was reset (connection closed, protocol error). */
  onReset(attempt: Attempt, reason: string): void {
    if (attempt !== this.attempt || this.finished) return;
    const s = this.s;
    if (this.tryTimer) clearTimeout(this.tryTimer);
    this.cluster.stats.upstream_rq_rx_reset.inc();
    attempt.host.stats.rq_error++;
    this.cluster.reportResult(attempt.host, 503);
    if (s.responseStarted) {
      this.router.stats.rq_reset_after_downstream_response_started.inc();
      s.setFlag('UC');
      this.finish();
      s.resetDownstream();
      return;
    }
    if (this.retry && retryOnReset(this.retry, false) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry(reason);
      return;
    }
    this.replyReset('UC', reason);
  }

  private fail(reason: PoolFailure, detail: string): void {
    const s = this.s;
    if (this.finished) return;
    if (this.tryTimer) clearTimeout(this.tryTimer);
    if (reason === 'overflow') {
      this.replyReset('UO', 'overflow');
      return;
    }
    // A connect failure or timeout counts for outlier detection as a 503 (local origin, not split).
    if (this.attempt) this.cluster.reportResult(this.attempt.host, 503);
    if (this.retry && retryOnReset(this.retry, true) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry(detail);
      return;
    }
    if (this.retry && retryOnReset(this.retry, true)) {
      this.cluster.stats.upstream_rq_retry_limit_exceeded.inc();
      s.setFlag('URX');
    }
    s.info.upstreamTransportFailureReason = detail;
    const why =
      reason === 'connection timeout'
        ? 'connection timeout'
        : reason === 'transport failure'
          ? `connection failure, transport failure reason: ${detail}`
          : `remote connection failure, transport failure reason: ${detail}`;
    this.replyReset('UF', why);
  }

  private replyReset(flag: 'UF' | 'UC' | 'UO', why: string): void {
    this.chargeCode(503);
    this.finish();
    this.s.sendLocalReply(503, CONNECT_ERROR + why, {
      flag,
      details: `upstream_reset_before_response_started{${why.replace(/ /g, '_')}}`,
      routeMutations: true,
    });
  }

  private canRetry(): boolean {
    if (!this.retry || this.retries >= this.retry.numRetries) return false;
    if (!this.retryHeld && !this.cluster.resources.canRetry()) {
      this.cluster.stats.upstream_rq_retry_overflow.inc();
      return false;
    }
    return true;
  }

  private scheduleRetry(why: string): void {
    const s = this.s;
    const c = this.cluster;
    this.retries++;
    if (!this.retryHeld) {
      this.retryHeld = true;
      c.resources.retries++;
      c.resources.updateGauges();
    }
    this.attempt?.abandon();
    this.attempt = undefined;
    const wait = backoffMs(this.retry!, this.retries - 1);
    const log = this.router.log;
    if (log.on('debug')) log.debug(`performing retry (${why}), backoff ${wait}ms`, s.tags);
    setTimeout(() => {
      if (this.finished || s.done) return;
      this.startAttempt();
    }, wait);
  }

  private onPerTryTimeout(attempt: Attempt): void {
    if (attempt !== this.attempt || this.finished) return;
    const s = this.s;
    this.cluster.stats.upstream_rq_per_try_timeout.inc();
    attempt.host.stats.rq_timeout++;
    this.cluster.reportResult(attempt.host, 504);
    if (s.responseStarted) return; // the global timeout governs a response in progress
    if (this.retry && retryOnReset(this.retry, false) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry('per try timeout');
      return;
    }
    this.timeoutReply();
  }

  private onGlobalTimeout(): void {
    if (this.finished) return;
    this.cluster.stats.upstream_rq_timeout.inc();
    if (this.attempt) {
      this.attempt.host.stats.rq_timeout++;
      this.cluster.reportResult(this.attempt.host, 504);
    }
    this.timeoutReply();
  }

  private timeoutReply(): void {
    const s = this.s;
    s.setFlag('UT');
    this.attempt?.abandon();
    this.attempt = undefined;
    if (s.responseStarted) {
      this.finish();
      s.resetDownstream();
      return;
    }
    this.chargeCode(504);
    this.finish();
    s.sendLocalReply(504, 'upstream request timeout', { details: 'response_timeout', routeMutations: true });
  }

  private onDownstreamGone(): void {
    if (this.finished) return;
    this.attempt?.abandon();
    this.attempt = undefined;
    this.finish();
  }

  private chargeCode(status: number): void {
    this.cluster.chargeCode(status);
  }

  private chargeResponse(status: number, attempt: Attempt): void {
    const c = this.cluster;
    this.chargeCode(status);
    c.stats.upstream_rq_completed.inc();
    c.stats.upstream_rq_time.record(performance.now() - attempt.startedAt);
    if (status >= 500) attempt.host.stats.rq_error++;
    else attempt.host.stats.rq_success++;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.globalTimer) clearTimeout(this.globalTimer);
    if (this.tryTimer) clearTimeout(this.tryTimer);
    if (this.retryHeld) {
      this.retryHeld = false;
      this.cluster.resources.retries--;
      this.cluster.resources.updateGauges();
    }
  }

  private sendMirrors(): void {
    const s = this.s;
    for (const m of this.action.mirrors) {
      if (!inFraction(m.fraction)) continue;
      const cluster = this.router.clusters.get(m.cluster);
      if (!cluster) continue;
      const headers: HeaderMap = { ...this.headers, host: shadowHost(String(this.headers.host ?? s.host)) };
      sendBuffered(cluster, { method: s.method, path: this.path, headers, body: s.body }, this.timeoutMs, s.tags).catch(
        () => {},
      );
    }
  }
}

/** preserve_case (HTTP/1 upstreams): each header name spelled as the client sent it. */
function withCase(headers: HeaderMap, cases: Map<string, string>): HeaderMap {
  const out: HeaderMap = {};
  for (const k in headers) out[cases.get(k) ?? k] = headers[k];
  return out;
}
