// The router filter (envoy.filters.http.router): route actions (cluster, weighted clusters, redirect, direct
// response), path and host rewrites, Envoy's upstream request headers, timeouts, retries, mirrors, circuit
// breakers, and the local replies Envoy's router sends when there is no answer from upstream.
import type { Dispatcher } from 'undici';
import { applyMutations } from '../config/headers.ts';
import type { RedirectConfig, RetryPolicy, RouteActionConfig, WeightedCluster } from '../config/route-table.ts';
import type { Cluster } from '../upstream/cluster.ts';
import type { Host } from '../upstream/host.ts';
import type { ConnPool, PendingStream, PoolConnection, PoolFailure } from '../upstream/pool.ts';
import { type ActiveStream, RESPONSE_HOP_BY_HOP } from './active-stream.ts';
import type { HeaderMap } from './stream-info.ts';
import { sendBuffered } from './upstream-request.ts';

const CONNECT_ERROR = 'upstream connect error or disconnect/reset before headers. reset reason: ';

function pathOnly(p: string): string {
  const q = p.indexOf('?');
  return q < 0 ? p : p.slice(0, q);
}

function headerLines(status: number | undefined, h: HeaderMap, pseudo: Array<[string, string]> = []): string {
  const lines = pseudo.map(([k, v]) => `'${k}', '${v}'`);
  if (status !== undefined) lines.unshift(`':status', '${status}'`);
  for (const k in h) {
    const v = h[k];
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) lines.push(`'${k}', '${one}'`);
  }
  return lines.join('\n');
}

export function routeRequest(s: ActiveStream): void {
  const hcm = s.hcm;
  const log = hcm.routerLog;
  const route = s.route;
  if (!route) {
    hcm.stats.no_route.inc();
    if (log.on('debug')) log.debug(`no route match for URL '${pathOnly(s.path)}'`, s.tags);
    s.sendLocalReply(404, '', { flag: 'NR', details: 'route_not_found' });
    return;
  }
  const a = route.action;
  if (a.kind === 'direct') {
    hcm.stats.rq_direct_response.inc();
    s.sendLocalReply(a.status, a.body ?? '', { routeMutations: true, details: 'direct_response' });
    return;
  }
  if (a.kind === 'redirect') {
    hcm.stats.rq_redirect.inc();
    s.sendLocalReply(a.code, '', {
      headers: { location: redirectLocation(s, a) },
      routeMutations: true,
      details: 'direct_response',
    });
    return;
  }
  hcm.stats.rq_total.inc();
  let weighted: WeightedCluster | undefined;
  let clusterName: string | undefined;
  if (a.weighted) {
    let pick = Math.random() * a.weighted.total;
    for (const w of a.weighted.clusters) {
      if (pick < w.weight) {
        weighted = w;
        break;
      }
      pick -= w.weight;
    }
    weighted ??= a.weighted.clusters.at(-1)!;
    clusterName = weighted.name;
  } else if (a.clusterHeader) {
    clusterName = s.header(a.clusterHeader) ?? '';
  } else {
    clusterName = a.cluster;
  }
  const cluster = clusterName ? hcm.deps.clusters.get(clusterName) : undefined;
  if (!cluster) {
    hcm.stats.no_cluster.inc();
    if (log.on('debug')) log.debug(`unknown cluster '${clusterName ?? ''}'`, s.tags);
    s.sendLocalReply(a.notFoundCode, '', { flag: 'NC', details: 'cluster_not_found', routeMutations: true });
    return;
  }
  if (log.on('debug')) log.debug(`cluster '${cluster.name}' match for URL '${pathOnly(s.path)}'`, s.tags);
  s.info.upstreamCluster = cluster.name;
  new UpstreamCall(s, a, cluster, weighted).start();
}

/** Applies a route's (or redirect's) prefix or regex rewrite to a path, keeping the query. */
function rewritePath(
  s: ActiveStream,
  prefixRewrite: string | undefined,
  regexRewrite: { re: import('../../shared/regex.ts').Re2; sub: string } | undefined,
): string | undefined {
  const q = s.path.indexOf('?');
  const path = q < 0 ? s.path : s.path.slice(0, q);
  const query = q < 0 ? '' : s.path.slice(q);
  if (prefixRewrite !== undefined) {
    const spec = s.route!.spec;
    if (spec.kind === 'prefix' || spec.kind === 'path' || spec.kind === 'path_separated_prefix') {
      const matched = spec.value.length;
      let rest = path.slice(matched);
      let prefix = prefixRewrite;
      // path_separated_prefix keeps the separator: rewriting "/a" to "/b" turns "/a/x" into "/b/x".
      if (prefix === '' && rest === '') rest = '/';
      if (prefix.endsWith('/') && rest.startsWith('/')) prefix = prefix.slice(0, -1);
      return prefix + rest + query;
    }
    return undefined;
  }
  if (regexRewrite) return regexRewrite.re.replaceAll(path, regexRewrite.sub) + query;
  return undefined;
}

function redirectLocation(s: ActiveStream, r: RedirectConfig): string {
  // Envoy: the scheme of the original URL (:scheme), not the connection's security.
  const scheme = r.scheme ?? s.scheme;
  let host = s.host;
  let port: string | undefined;
  const colon = host.lastIndexOf(':');
  if (colon > 0 && host.lastIndexOf(']') < colon) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (r.host !== undefined && r.host !== '') {
    host = r.host;
    // A host_redirect with its own port replaces both.
    if (host.lastIndexOf(':') > host.lastIndexOf(']')) port = undefined;
  }
  if (r.port) port = String(r.port);
  else if (r.scheme === 'https' && port === '80') port = undefined;
  else if (r.scheme === 'http' && port === '443') port = undefined;
  let path = s.path;
  if (r.pathRedirect !== undefined) {
    path = r.pathRedirect;
    // path_redirect replaces the query only when it has one of its own.
    if (!path.includes('?') && !r.stripQuery) {
      const q = s.path.indexOf('?');
      if (q >= 0) path += s.path.slice(q);
    }
  } else {
    path = rewritePath(s, r.prefixRewrite, r.regexRewrite) ?? s.path;
  }
  if (r.stripQuery) {
    const q = path.indexOf('?');
    if (q >= 0) path = path.slice(0, q);
  }
  return `${scheme}://${host}${port ? `:${port}` : ''}${path}`;
}

function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.maxIntervalMs, policy.baseIntervalMs * 2 ** retry);
  return Math.floor(Math.random() * ceiling);
}

/** One routed request to a cluster: attempts, retries, timeouts and the response stream. */
class UpstreamCall {
  private readonly s: ActiveStream;
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

  constructor(s: ActiveStream, action: RouteActionConfig, cluster: Cluster, weighted: WeightedCluster | undefined) {
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
    const suppress = s.hcm.suppressEnvoyHeaders;
    // x-envoy-upstream-rq-timeout-ms and -per-try-timeout-ms override the route's timeouts (and never go upstream).
    const rqTimeout = h['x-envoy-upstream-rq-timeout-ms'];
    if (typeof rqTimeout === 'string' && /^\d+$/.test(rqTimeout)) this.timeoutMs = Number(rqTimeout);
    const perTry = h['x-envoy-upstream-rq-per-try-timeout-ms'];
    if (typeof perTry === 'string' && /^\d+$/.test(perTry)) this.perTryTimeoutMs = Number(perTry);
    delete h['x-envoy-upstream-rq-timeout-ms'];
    delete h['x-envoy-upstream-rq-per-try-timeout-ms'];
    const rewritten = rewritePath(s, a.prefixRewrite, a.regexRewrite);
    if (rewritten !== undefined && rewritten !== s.path) {
      h['x-envoy-original-path'] = s.path;
      this.path = rewritten;
    }
    const hostRewrite = this.weighted?.hostRewriteLiteral ?? a.hostRewriteLiteral;
    if (hostRewrite) h.host = hostRewrite;
    else if (a.hostRewriteHeader) {
      const v = s.header(a.hostRewriteHeader);
      if (v) h.host = v;
    } else if (a.hostRewritePathRegex) {
      h.host = a.hostRewritePathRegex.re.replaceAll(pathOnly(s.path), a.hostRewritePathRegex.sub);
    }
    const expected =
      this.perTryTimeoutMs > 0 && (this.timeoutMs === 0 || this.perTryTimeoutMs < this.timeoutMs)
        ? this.perTryTimeoutMs
        : this.timeoutMs;
    if (!suppress && expected > 0) h['x-envoy-expected-rq-timeout-ms'] = String(expected);
    applyMutations(h, s.route!.requestMutations, s.info);
    if (this.weighted) applyMutations(h, [this.weighted.requestMutation], s.info);
    const log = s.hcm.routerLog;
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
      if (this.timeoutMs > 0) {
        this.globalTimer = setTimeout(() => this.onGlobalTimeout(), this.timeoutMs);
      }
      this.sendMirrors();
      this.startAttempt();
    };
    if (s.hasBody()) {
      s.readBody().then(go, () => s.sendLocalReply(413, 'Payload Too Large', { details: 'request_payload_too_large' }));
    } else {
      s.info.lastDownstreamRxMono = performance.now();
      go();
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
    const host = c.chooseHost();
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
    return {
      path: this.path,
      method: s.method as Dispatcher.HttpMethod,
      headers: this.headers as Record<string, string | string[]>,
      body: s.body ?? null,
    };
  }

  get stream(): ActiveStream {
    return this.s;
  }

  get upstreamCluster(): Cluster {
    return this.cluster;
  }

  /** Called by an attempt when its response headers arrive. Returns false when the response is discarded. */
  onResponseHeaders(attempt: Attempt, status: number, headers: HeaderMap): boolean {
    if (attempt !== this.attempt || this.finished) return false;
    const s = this.s;
    if (this.tryTimer) clearTimeout(this.tryTimer);
    if (this.retry && this.retriableStatus(status) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry(`upstream response ${status}`);
      return false;
    }
    if (this.retry && this.retriableStatus(status) && this.retries >= this.retry.numRetries) {
      this.cluster.stats.upstream_rq_retry_limit_exceeded.inc();
      s.setFlag('URX');
    }
    if (this.retries > 0) this.cluster.stats.upstream_rq_retry_success.inc();
    const out: HeaderMap = {};
    for (const k in headers) if (!RESPONSE_HOP_BY_HOP.has(k)) out[k] = headers[k];
    const serviceMs = Math.round(performance.now() - attempt.startedAt);
    s.info.upstreamServiceTime = serviceMs;
    s.info.firstUpstreamRxMono = performance.now();
    if (!s.hcm.suppressEnvoyHeaders) out['x-envoy-upstream-service-time'] = String(serviceMs);
    if (this.action.includeAttemptCountInResponse) out['x-envoy-attempt-count'] = String(s.info.attemptCount);
    applyMutations(out, s.route!.responseMutations, s.info);
    if (this.weighted) applyMutations(out, [this.weighted.responseMutation], s.info);
    s.info.responseCodeDetails = 'via_upstream';
    s.writeHeaders(status, out, true, s.hcm.filters.length);
    return true;
  }

  onResponseComplete(attempt: Attempt, status: number): void {
    if (attempt !== this.attempt) return;
    this.chargeResponse(status, attempt);
    this.finish();
    this.s.finishWith();
  }

  /** The attempt's upstream stream was reset (connection closed, protocol error). */
  onReset(attempt: Attempt, reason: string): void {
    if (attempt !== this.attempt || this.finished) return;
    const s = this.s;
    if (this.tryTimer) clearTimeout(this.tryTimer);
    this.cluster.stats.upstream_rq_rx_reset.inc();
    attempt.host.stats.rq_error++;
    if (s.responseStarted) {
      s.hcm.stats.rq_reset_after_downstream_response_started.inc();
      s.setFlag('UC');
      this.finish();
      s.resetDownstream();
      return;
    }
    if (this.retry && this.retryOnReset(false) && this.canRetry()) {
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
    if (this.retry && this.retryOnReset(true) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry(detail);
      return;
    }
    if (this.retry && this.retryOnReset(true)) {
      this.cluster.stats.upstream_rq_retry_limit_exceeded.inc();
      s.setFlag('URX');
    }
    s.info.upstreamTransportFailureReason = detail;
    const why =
      reason === 'connection timeout'
        ? 'connection timeout'
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

  private retriableStatus(status: number): boolean {
    const on = this.retry!.retryOn;
    if (on.has('5xx') && status >= 500) return true;
    if (on.has('gateway-error') && (status === 502 || status === 503 || status === 504)) return true;
    if (on.has('retriable-4xx') && status === 409) return true;
    if (on.has('retriable-status-codes') && this.retry!.retriableStatusCodes.has(status)) return true;
    return false;
  }

  private retryOnReset(connectFailure: boolean): boolean {
    const on = this.retry!.retryOn;
    if (on.has('5xx') || on.has('gateway-error') || on.has('reset')) return true;
    return connectFailure && on.has('connect-failure');
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
    if (s.hcm.routerLog.on('debug')) s.hcm.routerLog.debug(`performing retry (${why}), backoff ${wait}ms`, s.tags);
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
    if (s.responseStarted) return; // the global timeout governs a response in progress
    const on = this.retry?.retryOn;
    if (on && (on.has('5xx') || on.has('gateway-error') || on.has('reset')) && this.canRetry()) {
      this.cluster.stats.upstream_rq_retry.inc();
      this.scheduleRetry('per try timeout');
      return;
    }
    this.timeoutReply();
  }

  private onGlobalTimeout(): void {
    if (this.finished) return;
    this.cluster.stats.upstream_rq_timeout.inc();
    if (this.attempt) this.attempt.host.stats.rq_timeout++;
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
      if (m.fraction < 1 && Math.random() >= m.fraction) continue;
      const cluster = s.hcm.deps.clusters.get(m.cluster);
      if (!cluster) continue;
      const headers: HeaderMap = { ...this.headers, host: shadowHost(String(this.headers.host ?? s.host)) };
      sendBuffered(cluster, { method: s.method, path: this.path, headers, body: s.body }, this.timeoutMs, s.tags).catch(
        () => {},
      );
    }
  }
}

/** Envoy's shadow authority: "-shadow" appended to the host, before any port. */
export function shadowHost(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon > 0 && host.lastIndexOf(']') < colon) return `${host.slice(0, colon)}-shadow${host.slice(colon)}`;
  return `${host}-shadow`;
}

/** One try: a pool stream, then an undici dispatch on the connection it got. */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly call: UpstreamCall;
  readonly host: Host;
  /** The pool the try asked for a connection (a removed host's pool is closed, not replaced). */
  pool: ConnPool | undefined;
  pending: PendingStream | undefined;
  private conn: PoolConnection | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private abandoned = false;
  private status = 0;
  private forwarding = false;
  private closeAfter = false;
  private counted = false;
  startedAt = performance.now();

  constructor(call: UpstreamCall, host: Host) {
    this.call = call;
    this.host = host;
  }

  onPoolReady(conn: PoolConnection): void {
    const s = this.call.stream;
    const c = this.call.upstreamCluster;
    if (this.abandoned || s.done) {
      conn.release(true);
      return;
    }
    this.conn = conn;
    this.counted = true;
    c.stats.upstream_rq_total.inc();
    c.stats.upstream_rq_active.add(1);
    c.resources.requests++;
    this.host.stats.rq_total++;
    this.host.stats.rq_active++;
    if (s.hcm.routerLog.on('debug')) s.hcm.routerLog.debug('pool ready', s.tags);
    conn.dispatch(this.call.requestFor(), this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abandoned) controller.abort(new Error('abandoned'));
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx informational responses are not forwarded
    this.status = statusCode;
    const s = this.call.stream;
    const conn = headers.connection;
    if (typeof conn === 'string' && conn.toLowerCase().includes('close')) this.closeAfter = true;
    if (s.hcm.routerLog.on('debug')) {
      s.hcm.routerLog.debug(`upstream headers complete: end_stream=false\n${headerLines(statusCode, headers)}`, s.tags);
    }
    if (this.abandoned) return;
    this.forwarding = this.call.onResponseHeaders(this, statusCode, headers);
    if (!this.forwarding && !this.abandoned) {
      // Discarded for a retry: reset the upstream stream as Envoy does.
      this.abandon();
    }
    void controller;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.forwarding || this.abandoned) return;
    const s = this.call.stream;
    if (!s.write(chunk)) {
      controller.pause();
      s.res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    this.done(!this.closeAfter);
    if (this.forwarding && !this.abandoned) this.call.onResponseComplete(this, this.status);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.done(false);
    if (this.abandoned) return;
    this.call.onReset(this, describeReset(err));
  }

  /** Stops this try (timeout, retry, downstream gone): cancels a pending pool stream or aborts the request. */
  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    if (this.pending && !this.conn) this.pool?.cancel(this.pending);
    if (this.conn) {
      this.conn.noReuse = true;
      if (this.controller && !this.controller.aborted) this.controller.abort(new Error('upstream request abandoned'));
    }
  }

  private done(reusable: boolean): void {
    const c = this.call.upstreamCluster;
    if (this.counted) {
      this.counted = false;
      c.stats.upstream_rq_active.sub(1);
      c.resources.requests--;
      this.host.stats.rq_active--;
    }
    const conn = this.conn;
    if (conn) {
      this.conn = undefined;
      conn.release(reusable && !this.abandoned);
    }
  }
}

function describeReset(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection termination';
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_STATUS':
    case 'UND_ERR_INFO':
      return 'protocol error';
    default:
      return 'connection termination';
  }
}
