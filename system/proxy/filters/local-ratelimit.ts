// envoy.filters.http.local_ratelimit: a token bucket per filter config (the HCM's, or a route's own through
// typed_per_filter_config), enabled and enforced by fractions that default to 0% as in Envoy. Rate-limited
// requests get the configured status (429) with body "local_rate_limited" and response flag RL.
import { lookupEnum } from '../../shared/envoy/protos.ts';
import { ConfigError, durationMs, fraction, inFraction } from '../config/errors.ts';
import { applyMutations, compileHeaderMutation, type HeaderMutation } from '../config/headers.ts';
import type { Counter, StatsStore } from '../stats.ts';
import { isDisabled } from './disabled.ts';
import type { FilterFactory, J } from './filter-api.ts';

export class TokenBucket {
  readonly max: number;
  readonly perFill: number;
  readonly intervalMs: number;
  private tokens: number;
  private last: number;
  private readonly now: () => number;

  constructor(max: number, perFill: number, intervalMs: number, now: () => number = () => performance.now()) {
    this.max = max;
    this.perFill = perFill;
    this.intervalMs = intervalMs;
    this.tokens = max;
    this.now = now;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    const fills = Math.floor((t - this.last) / this.intervalMs);
    if (fills > 0) {
      this.tokens = Math.min(this.max, this.tokens + fills * this.perFill);
      this.last += fills * this.intervalMs;
    }
  }

  consume(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }

  remaining(): number {
    this.refill();
    return this.tokens;
  }

  /** ms until the next fill. */
  resetMs(): number {
    return Math.max(0, this.intervalMs - (this.now() - this.last));
  }
}

export interface RateLimitConfig {
  statPrefix: string;
  status: number;
  bucket: TokenBucket | undefined;
  enabled: number;
  enforced: number;
  responseHeaders: HeaderMutation;
  xRateLimitHeaders: boolean;
}

function statusCode(status: J | undefined): number {
  if (!status?.code) return 429;
  const code = status.code;
  if (typeof code === 'number') return code;
  const n = lookupEnum('envoy.type.v3.StatusCode').values[code];
  return n ?? 429;
}

export function compileRateLimit(c: J, where: string): RateLimitConfig {
  const statPrefix = String(c.stat_prefix ?? '');
  if (!statPrefix) throw new ConfigError(`${where}.stat_prefix: value length must be at least 1 characters`);
  let bucket: TokenBucket | undefined;
  if (c.token_bucket) {
    const tb = c.token_bucket as J;
    const interval = durationMs(tb.fill_interval);
    if (interval === undefined || interval <= 0) {
      throw new ConfigError(`${where}.token_bucket.fill_interval: value must be greater than 0s`);
    }
    if (!tb.max_tokens || tb.max_tokens < 1)
      throw new ConfigError(`${where}.token_bucket.max_tokens: value must be greater than 0`);
    bucket = new TokenBucket(tb.max_tokens, tb.tokens_per_fill ?? 1, interval);
  }
  if (c.descriptors?.length) throw new ConfigError(`${where}.descriptors: rate limit descriptors are not supported`);
  return {
    statPrefix,
    status: statusCode(c.status),
    bucket,
    // Envoy: "If not set, defaults to 0% of requests for safety."
    enabled: fraction(c.filter_enabled?.default_value, 0),
    enforced: fraction(c.filter_enforced?.default_value, 0),
    responseHeaders: compileHeaderMutation(c.response_headers_to_add, undefined, `${where}.response_headers_to_add`),
    xRateLimitHeaders: c.enable_x_ratelimit_headers === 'DRAFT_VERSION_03',
  };
}

interface Stats {
  enabled: Counter;
  enforced: Counter;
  rate_limited: Counter;
  ok: Counter;
}

const statCache = new WeakMap<StatsStore, Map<string, Stats>>();

function statsFor(store: StatsStore, prefix: string): Stats {
  let m = statCache.get(store);
  if (!m) {
    m = new Map();
    statCache.set(store, m);
  }
  let s = m.get(prefix);
  if (!s) {
    const p = `${prefix}.http_local_rate_limit.`;
    s = {
      enabled: store.counter(p + 'enabled'),
      enforced: store.counter(p + 'enforced'),
      rate_limited: store.counter(p + 'rate_limited'),
      ok: store.counter(p + 'ok'),
    };
    m.set(prefix, s);
  }
  return s;
}

export const localRateLimitFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.local_ratelimit',
  configTypes: ['envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit'],
  perRouteTypes: ['envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit'],
  parsePerRoute: (c, where) => compileRateLimit(c, where),
  create(name, config, ctx) {
    const base = compileRateLimit(config, 'typed_config');
    return {
      name,
      decodeHeaders(s) {
        const route = s.perFilterConfig<RateLimitConfig>(name);
        if (isDisabled(route)) return true;
        const cfg = route ?? base;
        if (!cfg.bucket) return true;
        const st = statsFor(ctx.stats, cfg.statPrefix);
        if (!inFraction(cfg.enabled)) return true;
        st.enabled.inc();
        const allowed = cfg.bucket.consume();
        if (cfg.xRateLimitHeaders) {
          s.extraResponseHeaders ??= {};
          s.extraResponseHeaders['x-ratelimit-limit'] = String(cfg.bucket.max);
          s.extraResponseHeaders['x-ratelimit-remaining'] = String(cfg.bucket.remaining());
          s.extraResponseHeaders['x-ratelimit-reset'] = String(Math.ceil(cfg.bucket.resetMs() / 1000));
        }
        if (allowed) {
          st.ok.inc();
          return true;
        }
        st.rate_limited.inc();
        if (!inFraction(cfg.enforced)) return true;
        st.enforced.inc();
        const headers: Record<string, string | string[] | undefined> = {};
        applyMutations(headers, [cfg.responseHeaders], s.info);
        s.sendLocalReply(cfg.status, 'local_rate_limited', {
          flag: 'RL',
          details: 'local_rate_limited',
          headers,
          fromFilter: s.filterIndex,
        });
        return false;
      },
    };
  },
};
