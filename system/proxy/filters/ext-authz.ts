// envoy.filters.http.ext_authz with an HTTP authorization service: the request's method, path (after
// path_prefix) and allowed headers go to the service's cluster; 200 allows (allowed_upstream_headers are copied to
// the upstream request), 5xx or no answer is an error (403 or status_on_error, unless failure_mode_allow), any
// other status denies and is relayed to the client with the service's body. Per route: ExtAuthzPerRoute.disabled.

import { lookupEnum } from '../../shared/envoy/protos.ts';
import { ConfigError, durationMs } from '../config/errors.ts';
import { applyMutations, compileHeaderMutation, type HeaderMutation } from '../config/headers.ts';
import { compileStringMatcher, type StringMatch } from '../config/matchers.ts';
import type { HeaderMap } from '../stream-info.ts';
import { sendBuffered, UpstreamError } from '../upstream/async-client.ts';
import { DISABLED, isDisabled } from './disabled.ts';
import type { FilterFactory, J } from './filter-api.ts';

interface ExtAuthzConfig {
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
  if (c.grpc_service) throw new ConfigError('ext_authz: grpc_service is not supported; use http_service');
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
  let statusOnError = 403;
  if (c.status_on_error?.code !== undefined) {
    const code = c.status_on_error.code;
    statusOnError = typeof code === 'number' ? code : (lookupEnum('envoy.type.v3.StatusCode').values[code] ?? 403);
  }
  return {
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
    failureModeAllow: c.failure_mode_allow === true,
    failureModeAllowHeaderAdd: c.failure_mode_allow_header_add === true,
    statusOnError,
    withBody: c.with_request_body !== undefined,
  };
}

const CLIENT_DEFAULTS = ['status', 'content-length', 'www-authenticate', 'location'];

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
    const p = `${ctx.statPrefix}ext_authz.`;
    const stats = {
      ok: ctx.stats.counter(p + 'ok'),
      denied: ctx.stats.counter(p + 'denied'),
      error: ctx.stats.counter(p + 'error'),
      failure_mode_allowed: ctx.stats.counter(p + 'failure_mode_allowed'),
      disabled: ctx.stats.counter(p + 'disabled'),
    };
    const log = ctx.logs.logger('ext_authz');
    return {
      name,
      async decodeHeaders(s) {
        if (isDisabled(s.perFilterConfig(name))) {
          stats.disabled.inc();
          return true;
        }
        const cluster = ctx.clusters.get(cfg.cluster);
        const headers: HeaderMap = {};
        for (const k in s.headers) {
          if (k === 'content-length') continue;
          if (!cfg.allowedHeaders || ALWAYS_SENT.has(k) || cfg.allowedHeaders.some((m) => m(k)))
            headers[k] = s.headers[k];
        }
        headers.host = cfg.authority || s.host;
        let body: Buffer | undefined;
        if (cfg.withBody) body = await s.readBody();
        headers['content-length'] = String(body?.length ?? 0);
        applyMutations(headers, [cfg.headersToAdd], s.info);
        if (log.on('debug')) log.debug(`ext_authz filter calling authorization server`, s.tags);
        let status = 0;
        let respHeaders: Record<string, string | string[] | undefined> = {};
        let respBody: Buffer = Buffer.alloc(0);
        let failure: string | undefined;
        if (!cluster) {
          failure = `ext_authz resource for cluster '${cfg.cluster}' is missing`;
        } else {
          try {
            const r = await sendBuffered(
              cluster,
              { method: s.method, path: cfg.pathPrefix + s.path, headers, body },
              cfg.timeoutMs,
              s.tags,
            );
            status = r.status;
            respHeaders = r.headers;
            respBody = r.body;
          } catch (err) {
            failure = err instanceof UpstreamError ? err.message : String(err);
          }
        }
        if (s.done) return false;
        if (failure === undefined && status >= 500) failure = `authorization server answered ${status}`;
        if (failure !== undefined) {
          stats.error.inc();
          log.debug(`ext_authz check failed: ${failure}`, s.tags);
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
        if (status === 200) {
          stats.ok.inc();
          for (const k in respHeaders) {
            const v = respHeaders[k];
            if (v === undefined) continue;
            if (cfg.upstreamHeaders.some((m) => m(k))) s.headers[k] = v;
            else if (cfg.upstreamHeadersToAppend.some((m) => m(k))) {
              const cur = s.headers[k];
              s.headers[k] =
                cur === undefined ? v : [...(Array.isArray(cur) ? cur : [cur]), ...(Array.isArray(v) ? v : [v])];
            }
            if (cfg.clientHeadersOnSuccess.some((m) => m(k))) {
              s.extraResponseHeaders ??= {};
              s.extraResponseHeaders[k] = v;
            }
          }
          log.debug('ext_authz filter accepted the request', s.tags);
          return true;
        }
        stats.denied.inc();
        log.debug(`ext_authz filter rejected the request. Response status code: '${status}'`, s.tags);
        const toClient: HeaderMap = {};
        for (const k in respHeaders) {
          if (NEVER_TO_CLIENT.has(k)) continue;
          const ok = cfg.clientHeaders ? CLIENT_DEFAULTS.includes(k) || cfg.clientHeaders.some((m) => m(k)) : true;
          if (ok) toClient[k] = respHeaders[k];
        }
        s.sendLocalReply(status, respBody, {
          flag: 'UAEX',
          details: 'ext_authz_denied',
          headers: toClient,
          fromFilter: s.filterIndex,
        });
        return false;
      },
    };
  },
};
