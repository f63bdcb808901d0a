// envoy.filters.http.ratelimit: the global rate limit filter (source/extensions/filters/http/ratelimit/ratelimit.cc).
// On a request whose route has RouteAction.rate_limits of the filter's stage, the descriptors those make
// (config/rate-limits.ts) go to the rate-limit service in one envoy.service.ratelimit.v3.RateLimitService/
// ShouldRateLimit call (domain, descriptors, hits_addend 1) over the service's cluster (rate_limit_service.grpc_service
// .envoy_grpc; timeout 20 ms by default). OK continues (with the service's request_headers_to_add on the request and
// response_headers_to_add on the response); OVER_LIMIT answers 429 (rate_limited_status) with
// `x-envoy-ratelimited: true` (unless disable_x_envoy_ratelimited_header), flag RL, details request_rate_limited; a
// failed call continues (failure_mode_allowed) unless failure_mode_deny, then 500 (status_on_error), flag RLSE,
// details rate_limiter_error. Stats `cluster.<route's cluster>.ratelimit.{ok,over_limit,error,failure_mode_allowed}`.
// Per route: FilterConfig.disabled (a RateLimitPerRoute is NACKed).
import { lookupEnum } from '../../shared/envoy/protos.ts';
import { ConfigError, durationMs } from '../config/errors.ts';
import type { DescriptorInput } from '../config/rate-limits.ts';
import type { HeaderMap } from '../stream-info.ts';
import { GrpcError, type GrpcMethod, grpcMethod, grpcTarget, grpcUnary, type Msg } from '../upstream/grpc-client.ts';
import { isDisabled } from './disabled.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';

let method: GrpcMethod | undefined;
function shouldRateLimit(): GrpcMethod {
  method ??= grpcMethod(
    'envoy.service.ratelimit.v3.RateLimitService',
    'ShouldRateLimit',
    'envoy.service.ratelimit.v3.RateLimitRequest',
    'envoy.service.ratelimit.v3.RateLimitResponse',
  );
  return method;
}

interface Config {
  domain: string;
  stage: number;
  cluster: string;
  authority: string;
  timeoutMs: number;
  failureModeDeny: boolean;
  rateLimitedStatus: number;
  statusOnError: number;
  xEnvoyHeader: boolean;
}

function httpStatus(s: J | undefined, dflt: number): number {
  const code = s?.code;
  if (code === undefined) return dflt;
  return typeof code === 'number' ? code : (lookupEnum('envoy.type.v3.StatusCode').values[code] ?? dflt);
}

function compile(c: J): Config {
  if (!c.domain) throw new ConfigError('ratelimit.domain: value length must be at least 1 characters');
  const rls = c.rate_limit_service as J | undefined;
  if (!rls) throw new ConfigError('ratelimit.rate_limit_service: value is required');
  const g = grpcTarget(rls.grpc_service, 'ratelimit.rate_limit_service.grpc_service', 20);
  for (const f of ['request_type', 'enable_x_ratelimit_headers', 'rate_limited_as_resource_exhausted']) {
    if (c[f] !== undefined && c[f] !== false && c[f] !== 'OFF' && c[f] !== 'both') {
      throw new ConfigError(`ratelimit.${f} is not supported`);
    }
  }
  return {
    domain: String(c.domain),
    stage: Number(c.stage ?? 0),
    cluster: g.cluster,
    authority: g.authority,
    timeoutMs: c.timeout === undefined ? 20 : (durationMs(c.timeout) ?? 20),
    failureModeDeny: c.failure_mode_deny === true,
    rateLimitedStatus: httpStatus(c.rate_limited_status, 429),
    statusOnError: httpStatus(c.status_on_error, 500),
    xEnvoyHeader: c.disable_x_envoy_ratelimited_header !== true,
  };
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(',') : v;
}

/** The descriptors the route's rate_limits of this stage make for the request. */
function descriptors(s: FilterStream, stage: number): { entries: { key: string; value: string }[] }[] {
  const a = s.route?.action;
  if (a?.kind !== 'route' || !a.rateLimits) return [];
  const remote = s.info.downstreamRemote;
  const i = remote.lastIndexOf(':');
  const input: DescriptorInput = {
    header: (n) => (n.startsWith(':') ? s.header(n) : first(s.headers[n])),
    remoteAddress: (i < 0 ? remote : remote.slice(0, i)).replace(/^\[|\]$/g, '').replace(/^::ffff:/, ''),
    cluster: a.cluster,
  };
  const out: { entries: { key: string; value: string }[] }[] = [];
  for (const rl of a.rateLimits) {
    if (rl.stage !== stage) continue;
    const d = rl.descriptor(input);
    if (d) out.push({ entries: d });
  }
  return out;
}

function headerPairs(list: Msg[] | undefined): HeaderMap {
  const out: HeaderMap = {};
  for (const h of list ?? []) if (h.key) out[String(h.key).toLowerCase()] = String(h.value ?? h.raw_value ?? '');
  return out;
}

export const rateLimitFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.ratelimit',
  configTypes: ['envoy.extensions.filters.http.ratelimit.v3.RateLimit'],
  perRouteTypes: [],
  create(name, config, ctx) {
    const cfg = compile(config);
    const log = ctx.logs.logger('filter');
    const stat = (cluster: string, n: string) => ctx.stats.counter(`cluster.${cluster}.ratelimit.${n}`);
    return {
      name,
      async decodeHeaders(s) {
        if (isDisabled(s.perFilterConfig(name))) return true;
        const list = descriptors(s, cfg.stage);
        if (!list.length) return true;
        const target = s.route?.action.kind === 'route' ? (s.route.action.cluster ?? '') : '';
        const cluster = ctx.clusters.get(cfg.cluster);
        let resp: Msg | undefined;
        let failure: string | undefined;
        if (!cluster) failure = `rate limit service cluster '${cfg.cluster}' is missing`;
        else {
          try {
            resp = await grpcUnary(
              cluster,
              shouldRateLimit(),
              { domain: cfg.domain, descriptors: list, hits_addend: 1 },
              { authority: cfg.authority, timeoutMs: cfg.timeoutMs, tags: s.tags },
            );
          } catch (e) {
            failure = e instanceof GrpcError ? e.message : String(e);
          }
        }
        if (s.done) return false;
        const code = resp?.overall_code;
        if (failure === undefined && code !== 'OK' && code !== 'OVER_LIMIT')
          failure = `overall_code ${code ?? 'UNKNOWN'}`;
        if (failure !== undefined) {
          stat(target, 'error').inc();
          log.debug(`ratelimit: call failed: ${failure}`, s.tags);
          if (!cfg.failureModeDeny) {
            stat(target, 'failure_mode_allowed').inc();
            return true;
          }
          s.sendLocalReply(cfg.statusOnError, '', {
            flag: 'RLSE',
            details: 'rate_limiter_error',
            fromFilter: s.filterIndex,
          });
          return false;
        }
        const toClient = headerPairs(resp!.response_headers_to_add);
        if (code === 'OK') {
          stat(target, 'ok').inc();
          Object.assign(s.headers, headerPairs(resp!.request_headers_to_add));
          if (Object.keys(toClient).length) s.extraResponseHeaders = { ...s.extraResponseHeaders, ...toClient };
          return true;
        }
        stat(target, 'over_limit').inc();
        log.debug('ratelimit: request is over the limit', s.tags);
        if (cfg.xEnvoyHeader) toClient['x-envoy-ratelimited'] = 'true';
        s.sendLocalReply(cfg.rateLimitedStatus, '', {
          flag: 'RL',
          details: 'request_rate_limited',
          headers: toClient,
          fromFilter: s.filterIndex,
        });
        return false;
      },
    };
  },
};
