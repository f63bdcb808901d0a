// envoy.filters.http.ext_authz (source/extensions/filters/http/ext_authz/ext_authz.cc). With an HTTP authorization
// service: the request's method, path (after path_prefix) and allowed headers go to the service's cluster; 200
// allows (allowed_upstream_headers are copied to the upstream request), 5xx or no answer is an error (403 or
// status_on_error, unless failure_mode_allow), any other status denies and is relayed to the client with the
// service's body. With a gRPC service (`grpc_service.envoy_grpc`, ext-authz-grpc.ts): a CheckRequest to
// Authorization/Check on the cluster, its CheckResponse allows or denies; a failed call is an error as above.
// Per route: ExtAuthzPerRoute.disabled, check_settings.context_extensions (sent in the CheckRequest).

import { lookupEnum } from '../../shared/envoy/protos.ts';
import { ConfigError, durationMs } from '../config/errors.ts';
import { applyMutations, compileHeaderMutation, type HeaderMutation } from '../config/headers.ts';
import { compileStringMatcher, type StringMatch } from '../config/matchers.ts';
import type { HeaderMap } from '../stream-info.ts';
import { type BufferedResponse, sendBuffered, UpstreamError } from '../upstream/async-client.ts';
import type { Cluster } from '../upstream/cluster.ts';
import { grpcTarget } from '../upstream/grpc-client.ts';
import { DISABLED, isDisabled } from './disabled.ts';
import { applyOk, buildCheckRequest, type GrpcAuthzTarget, grpcCheck } from './ext-authz-grpc.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';

interface ExtAuthzConfig {
  /** Set for a gRPC authorization service; the HTTP fields below are then unused. */
  grpc: GrpcAuthzTarget | undefined;
  cluster: string;
  authority: string;
  pathPrefix: string;
  timeoutMs: number;
  /** undefined: every request header goes to the service. */
  allowedHeaders: StringMatch[] | undefined;
  headersToAdd: HeaderMutation;
  upstreamHeaders: StringMatch[];
  upstreamHeadersToAppend: StringMatch[];
  clientHeaders: StringMatch[] | undefined;
  clientHeadersOnSuccess: StringMatch[];
  failureModeAllow: boolean;
  failureModeAllowHeaderAdd: boolean;
  statusOnError: number;
  withBody: boolean;
}

const ALWAYS_SENT = new Set(['host', 'authorization', 'content-length']);
const NEVER_TO_CLIENT = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'date',
  'server',
]);

function list(m: J | undefined, where: string): StringMatch[] {
  // Header names compare case-insensitively (Envoy lower-cases the matchers unless told otherwise).
  return ((m?.patterns ?? []) as J[]).map((p, i) => {
    const ic = p.safe_regex ? p : { ...p, ignore_case: true };
    return compileStringMatcher(ic, `${where}.patterns[${i}]`);
  });
}

function compile(c: J): ExtAuthzConfig {
  const common = {
    failureModeAllow: c.failure_mode_allow === true,
    failureModeAllowHeaderAdd: c.failure_mode_allow_header_add === true,
    statusOnError: statusOnError(c),
    withBody: c.with_request_body !== undefined,
  };
  if (c.grpc_service) {
    if (c.http_service) throw new ConfigError('ext_authz: set one of grpc_service and http_service');
    // grpc_service: the timeout defaults to 200 ms (ext_authz.proto).
    const g = grpcTarget(c.grpc_service, 'ext_authz.grpc_service', 200);
    return {
      ...common,
      grpc: g,
      cluster: g.cluster,
      authority: g.authority,
      pathPrefix: '',
      timeoutMs: g.timeoutMs,
      allowedHeaders: c.allowed_headers ? list(c.allowed_headers, 'allowed_headers') : undefined,
      headersToAdd: compileHeaderMutation([], undefined, 'grpc_service'),
      upstreamHeaders: [],
      upstreamHeadersToAppend: [],
      clientHeaders: undefined,
      clientHeadersOnSuccess: [],
    };
  }
  const hs = c.http_service as J | undefined;
  if (!hs) throw new ConfigError('ext_authz: http_service is required');
  const uri = hs.server_uri as J | undefined;
  if (!uri?.cluster)
    throw new ConfigError('ext_authz.http_service.server_uri.cluster: value length must be at least 1 characters');
  const timeoutMs = durationMs(uri.timeout);
  if (timeoutMs === undefined) throw new ConfigError('ext_authz.http_service.server_uri.timeout: value is required');
  let authority = '';
  try {
    authority = new URL(String(uri.uri ?? '')).host;
  } catch {
    throw new ConfigError(`ext_authz: server URI '${uri.uri ?? ''}' is not a valid URI`);
  }
  const req = hs.authorization_request as J | undefined;
  const resp = hs.authorization_response as J | undefined;
  const allowed = req?.allowed_headers ?? c.allowed_headers;
  return {
    ...common,
    grpc: undefined,
    cluster: String(uri.cluster),
    authority,
    pathPrefix: String(hs.path_prefix ?? ''),
    timeoutMs,
    allowedHeaders: allowed ? list(allowed, 'allowed_headers') : undefined,
    headersToAdd: compileHeaderMutation(
      (req?.headers_to_add ?? []).map((h: J) => ({ header: h, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' })),
      undefined,
      'authorization_request.headers_to_add',
    ),
    upstreamHeaders: list(resp?.allowed_upstream_headers, 'allowed_upstream_headers'),
    upstreamHeadersToAppend: list(resp?.allowed_upstream_headers_to_append, 'allowed_upstream_headers_to_append'),
    clientHeaders: resp?.allowed_client_headers
      ? list(resp.allowed_client_headers, 'allowed_client_headers')
      : undefined,
    clientHeadersOnSuccess: list(resp?.allowed_client_headers_on_success, 'allowed_client_headers_on_success'),
  };
}

function statusOnError(c: J): number {
  const code = c.status_on_error?.code;
  if (code === undefined) return 403;
  return typeof code === 'number' ? code : (lookupEnum('envoy.type.v3.StatusCode').values[code] ?? 403);
}

const CLIENT_DEFAULTS = ['status', 'content-length', 'www-authenticate', 'location'];

/** A check's result, from either kind of service. */
type Outcome =
  | { kind: 'ok'; apply: () => void }
  | { kind: 'denied'; status: number; headers: HeaderMap; body: string | Buffer }
  | { kind: 'error'; failure: string };

/** The HTTP service: the request (allowed headers, path_prefix) to the cluster; its status decides. */
async function httpCheck(
  cfg: ExtAuthzConfig,
  cluster: Cluster,
  s: FilterStream,
  body: Buffer | undefined,
): Promise<Outcome> {
  const headers: HeaderMap = {};
  for (const k in s.headers) {
    if (k === 'content-length') continue;
    if (!cfg.allowedHeaders || ALWAYS_SENT.has(k) || cfg.allowedHeaders.some((m) => m(k))) headers[k] = s.headers[k];
  }
  headers.host = cfg.authority || s.host;
  headers['content-length'] = String(body?.length ?? 0);
  applyMutations(headers, [cfg.headersToAdd], s.info);
  let r: BufferedResponse;
  try {
    r = await sendBuffered(
      cluster,
      { method: s.method, path: cfg.pathPrefix + s.path, headers, body },
      cfg.timeoutMs,
      s.tags,
    );
  } catch (err) {
    return { kind: 'error', failure: err instanceof UpstreamError ? err.message : String(err) };
  }
  if (r.status >= 500) return { kind: 'error', failure: `authorization server answered ${r.status}` };
  if (r.status === 200) return { kind: 'ok', apply: () => applyHttpOk(cfg, s, r.headers) };
  const toClient: HeaderMap = {};
  for (const k in r.headers) {
    if (NEVER_TO_CLIENT.has(k)) continue;
    const ok = cfg.clientHeaders ? CLIENT_DEFAULTS.includes(k) || cfg.clientHeaders.some((m) => m(k)) : true;
    if (ok) toClient[k] = r.headers[k];
  }
  return { kind: 'denied', status: r.status, headers: toClient, body: r.body };
}

function applyHttpOk(cfg: ExtAuthzConfig, s: FilterStream, respHeaders: BufferedResponse['headers']): void {
  for (const k in respHeaders) {
    const v = respHeaders[k];
    if (v === undefined) continue;
    if (cfg.upstreamHeaders.some((m) => m(k))) s.headers[k] = v;
    else if (cfg.upstreamHeadersToAppend.some((m) => m(k))) {
      const cur = s.headers[k];
      s.headers[k] = cur === undefined ? v : [...(Array.isArray(cur) ? cur : [cur]), ...(Array.isArray(v) ? v : [v])];
    }
    if (cfg.clientHeadersOnSuccess.some((m) => m(k))) {
      s.extraResponseHeaders ??= {};
      s.extraResponseHeaders[k] = v;
    }
  }
}

export const extAuthzFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.ext_authz',
  configTypes: ['envoy.extensions.filters.http.ext_authz.v3.ExtAuthz'],
  perRouteTypes: ['envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute'],
  parsePerRoute(c) {
    if (c.disabled === true) return DISABLED;
    return { checkSettings: c.check_settings ?? {} };
  },
  create(name, config, ctx) {
    const cfg = compile(config);
    const stats = ctx.stats.group(`${ctx.statPrefix}ext_authz.`, [
      'ok',
      'denied',
      'error',
      'failure_mode_allowed',
      'disabled',
    ] as const);
    const log = ctx.logs.logger('ext_authz');
    return {
      name,
      async decodeHeaders(s) {
        const per = s.perFilterConfig<{ checkSettings: J }>(name);
        if (isDisabled(per)) {
          stats.disabled.inc();
          return true;
        }
        const cluster = ctx.clusters.get(cfg.cluster);
        const body = cfg.withBody ? await s.readBody() : undefined;
        if (log.on('debug')) log.debug(`ext_authz filter calling authorization server`, s.tags);
        let outcome: Outcome;
        if (!cluster)
          outcome = { kind: 'error', failure: `ext_authz resource for cluster '${cfg.cluster}' is missing` };
        else if (cfg.grpc) {
          const allowed = cfg.allowedHeaders && ((k: string) => cfg.allowedHeaders!.some((m) => m(k)));
          const ctxExt = (per?.checkSettings?.context_extensions ?? {}) as Record<string, string>;
          const req = buildCheckRequest(s, allowed, body, ctxExt);
          const r = await grpcCheck(cluster, cfg.grpc, req, s);
          outcome = r.kind === 'ok' ? { kind: 'ok', apply: () => applyOk(s, r) } : r;
        } else outcome = await httpCheck(cfg, cluster, s, body);
        if (s.done) return false;
        if (outcome.kind === 'error') {
          stats.error.inc();
          log.debug(`ext_authz check failed: ${outcome.failure}`, s.tags);
          if (cfg.failureModeAllow) {
            stats.failure_mode_allowed.inc();
            if (cfg.failureModeAllowHeaderAdd) s.headers['x-envoy-auth-failure-mode-allowed'] = 'true';
            return true;
          }
          s.sendLocalReply(cfg.statusOnError, '', {
            flag: 'UAEX',
            details: 'ext_authz_error',
            fromFilter: s.filterIndex,
          });
          return false;
        }
        if (outcome.kind === 'ok') {
          stats.ok.inc();
          outcome.apply();
          log.debug('ext_authz filter accepted the request', s.tags);
          return true;
        }
        stats.denied.inc();
        log.debug(`ext_authz filter rejected the request. Response status code: '${outcome.status}'`, s.tags);
        s.sendLocalReply(outcome.status, outcome.body, {
          flag: 'UAEX',
          details: 'ext_authz_denied',
          headers: outcome.headers,
          fromFilter: s.filterIndex,
        });
        return false;
      },
    };
  },
};
