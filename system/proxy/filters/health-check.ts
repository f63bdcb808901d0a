// envoy.filters.http.health_check (non pass-through mode): requests matching its headers are answered here,
// 200 while the server is live and healthy, 503 after /healthcheck/fail (with x-envoy-immediate-health-check-fail)
// or before initialization completes. A readiness listener can use it instead of routing to the admin port.
import { ConfigError } from '../config/errors.ts';
import { compileHeaderMatcher } from '../config/matchers.ts';
import type { FilterFactory } from './filter-api.ts';

export const healthCheckFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.health_check',
  configTypes: ['envoy.extensions.filters.http.health_check.v3.HealthCheck'],
  perRouteTypes: [],
  create(name, config, ctx) {
    if (config.pass_through_mode === undefined) {
      throw new ConfigError('health_check.pass_through_mode: value is required');
    }
    if (config.pass_through_mode === true) {
      throw new ConfigError('health_check.pass_through_mode: pass-through mode is not supported');
    }
    if (config.cluster_min_healthy_percentages) {
      throw new ConfigError('health_check.cluster_min_healthy_percentages: not supported');
    }
    const matchers = (config.headers ?? []).map((h: Record<string, unknown>, i: number) =>
      compileHeaderMatcher(h, `health_check.headers[${i}]`),
    );
    return {
      name,
      decodeHeaders(s) {
        for (const m of matchers) if (!m(s.header)) return true;
        s.info.healthCheck = true;
        const failed = ctx.server.healthCheckFailed();
        if (failed || !ctx.server.isLive()) {
          s.sendLocalReply(503, '', {
            headers: failed ? { 'x-envoy-immediate-health-check-fail': 'true' } : {},
            details: 'health_check_failed',
            fromFilter: s.filterIndex,
          });
        } else {
          s.sendLocalReply(200, '', { details: 'health_check_ok', fromFilter: s.filterIndex });
        }
        return false;
      },
    };
  },
};
