// TrafficPolicy `rateLimit.local` → envoy.filters.http.local_ratelimit: the filter (no bucket of its own) on a
// listener where some route is rate limited, and on that route a LocalRateLimit with its token bucket, enabled and
// enforced for every request.
import type { ListenerIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.local_ratelimit';
const LOCAL_RATE_LIMIT = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const STAT_PREFIX = 'http_local_rate_limiter';

export const localRateLimitFilter = {
  forListener(l: ListenerIR) {
    const used = l.virtualHosts.some((v) => v.routes.some((r) => r.policy.rateLimit));
    return {
      chain: used ? [{ name: NAME, typed_config: { '@type': LOCAL_RATE_LIMIT, stat_prefix: STAT_PREFIX } }] : [],
      perRoute(r: RouteIR): Json {
        const rl = r.policy.rateLimit;
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
            filter_enabled: { default_value: { numerator: 100 } },
            filter_enforced: { default_value: { numerator: 100 } },
          },
        };
      },
    };
  },
};
