// TrafficPolicy `rateLimit.local` → envoy.filters.http.local_ratelimit: the filter (no bucket of its own) on a
// listener where some route is rate limited, and on that route a LocalRateLimit with its token bucket, enabled
// (counted) for percentEnabled and enforced (429) for percentEnforced of the requests, 100 % unless set (as
// kgateway's LocalRateLimitPolicy maps them onto filter_enabled and filter_enforced).
import type { RouteIR } from '../../ir/types.ts';
import { fractionalPercent, type Json } from './envoy.ts';

const NAME = 'envoy.filters.http.local_ratelimit';
const LOCAL_RATE_LIMIT = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const STAT_PREFIX = 'http_local_rate_limiter';
const percent = (p: number | undefined) => fractionalPercent((p ?? 100) * 10_000);

export const localRateLimitFilter = {
  forListener(routes: readonly RouteIR[]) {
    const used = routes.some((r) => r.policy.rateLimit?.local);
    return {
      chain: used ? [{ name: NAME, typed_config: { '@type': LOCAL_RATE_LIMIT, stat_prefix: STAT_PREFIX } }] : [],
      perRoute(r: RouteIR): Json {
        const rl = r.policy.rateLimit?.local;
        if (!rl) return {};
        return {
          [NAME]: {
            '@type': LOCAL_RATE_LIMIT,
            stat_prefix: STAT_PREFIX,
            token_bucket: {
              max_tokens: rl.maxTokens,
              tokens_per_fill: rl.tokensPerFill,
              fill_interval: rl.fillInterval,
            },
            filter_enabled: { default_value: percent(rl.percentEnabled) },
            filter_enforced: { default_value: percent(rl.percentEnforced) },
          },
        };
      },
    };
  },
};
