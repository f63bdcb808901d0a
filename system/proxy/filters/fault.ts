// envoy.filters.http.fault: delays and aborts for a fraction of requests (optionally only those matching headers),
// configured on the HCM or per route (the route's HTTPFault replaces the HCM's). Header-controlled faults
// (x-envoy-fault-delay-request, x-envoy-fault-abort-request) apply when the config asks for them.
import { ConfigError, durationMs, fraction, inFraction } from '../config/errors.ts';
import { compileHeaderMatcher, type HeaderMatch } from '../config/matchers.ts';
import type { Counter } from '../stats.ts';
import { isDisabled } from './disabled.ts';
import type { FilterFactory, J } from './filter-api.ts';

export interface FaultConfig {
  delayMs: number | undefined;
  headerDelay: boolean;
  delayFraction: number;
  abortStatus: number | undefined;
  headerAbort: boolean;
  abortFraction: number;
  headers: HeaderMatch[];
  maxActive: number | undefined;
}

export function compileFault(c: J, where: string): FaultConfig {
  const d = c.delay as J | undefined;
  const a = c.abort as J | undefined;
  if (a?.grpc_status !== undefined) throw new ConfigError(`${where}.abort.grpc_status: gRPC aborts are not supported`);
  if (c.response_rate_limit)
    throw new ConfigError(`${where}.response_rate_limit: response rate limiting is not supported`);
  if (a?.http_status !== undefined && (a.http_status < 200 || a.http_status >= 600)) {
    throw new ConfigError(`${where}.abort.http_status: value must be inside range [200, 600)`);
  }
  return {
    delayMs: durationMs(d?.fixed_delay),
    headerDelay: d?.header_delay !== undefined,
    // An unset percentage is the proto default: 0 of 100.
    delayFraction: fraction(d?.percentage, 0),
    abortStatus: a?.http_status,
    headerAbort: a?.header_abort !== undefined,
    abortFraction: fraction(a?.percentage, 0),
    headers: ((c.headers ?? []) as J[]).map((h, i) => compileHeaderMatcher(h, `${where}.headers[${i}]`)),
    maxActive: c.max_active_faults,
  };
}

export const faultFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.fault',
  configTypes: ['envoy.extensions.filters.http.fault.v3.HTTPFault'],
  perRouteTypes: ['envoy.extensions.filters.http.fault.v3.HTTPFault'],
  parsePerRoute: (c, where) => compileFault(c, where),
  create(name, config, ctx) {
    const base = compileFault(config, 'typed_config');
    const p = `${ctx.statPrefix}fault.`;
    const delays: Counter = ctx.stats.counter(p + 'delays_injected');
    const aborts: Counter = ctx.stats.counter(p + 'aborts_injected');
    const overflow: Counter = ctx.stats.counter(p + 'faults_overflow');
    const active = ctx.stats.gauge(p + 'active_faults');
    return {
      name,
      decodeHeaders(s) {
        const route = s.perFilterConfig<FaultConfig>(name);
        if (isDisabled(route)) return true;
        const cfg = route ?? base;
        for (const m of cfg.headers) if (!m(s.header)) return true;
        let delayMs: number | undefined;
        if (cfg.headerDelay) {
          const v = Number(s.header('x-envoy-fault-delay-request'));
          const pct = s.header('x-envoy-fault-delay-request-percentage');
          if (Number.isFinite(v) && v > 0 && inFraction(pct === undefined ? cfg.delayFraction || 1 : Number(pct) / 100))
            delayMs = v;
        } else if (cfg.delayMs !== undefined && inFraction(cfg.delayFraction)) {
          delayMs = cfg.delayMs;
        }
        let abort: number | undefined;
        if (cfg.headerAbort) {
          const v = Number(s.header('x-envoy-fault-abort-request'));
          const pct = s.header('x-envoy-fault-abort-request-percentage');
          if (v >= 200 && v < 600 && inFraction(pct === undefined ? cfg.abortFraction || 1 : Number(pct) / 100))
            abort = v;
        } else if (cfg.abortStatus !== undefined && inFraction(cfg.abortFraction)) {
          abort = cfg.abortStatus;
        }
        if (delayMs === undefined && abort === undefined) return true;
        if (cfg.maxActive !== undefined && active.value >= cfg.maxActive) {
          overflow.inc();
          return true;
        }
        const doAbort = () => {
          if (abort === undefined) return true;
          aborts.inc();
          s.sendLocalReply(abort, 'fault filter abort', {
            flag: 'FI',
            details: 'fault_filter_abort',
            fromFilter: s.filterIndex,
          });
          return false;
        };
        if (delayMs === undefined) return doAbort();
        delays.inc();
        s.setFlag('DI');
        active.add(1);
        return new Promise<boolean>((resolve) => {
          const t = setTimeout(() => {
            cancel();
            active.sub(1);
            resolve(s.done ? false : doAbort());
          }, delayMs);
          const cancel = s.onDownstreamGone(() => {
            clearTimeout(t);
            active.sub(1);
            resolve(false);
          });
        });
      },
    };
  },
};
