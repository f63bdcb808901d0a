// TrafficPolicy `faultInjection` → envoy.filters.http.fault: the filter on a listener where some route injects
// faults, and on that route an HTTPFault with its delay and abort, each for its share of requests.
import type { RouteIR } from '../../ir/types.ts';
import { fractionalPercent, type Json } from './envoy.ts';

const NAME = 'envoy.filters.http.fault';
const HTTP_FAULT = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';

export const faultFilter = {
  forListener(routes: readonly RouteIR[]) {
    const used = routes.some((r) => r.policy.faultInjection);
    return {
      chain: used ? [{ name: NAME, typed_config: { '@type': HTTP_FAULT } }] : [],
      perRoute(r: RouteIR): Json {
        const f = r.policy.faultInjection;
        if (!f || (!f.delay && !f.abort)) return {};
        const cfg: Json = { '@type': HTTP_FAULT };
        if (f.delay) cfg.delay = { fixed_delay: f.delay.fixedDelay, percentage: fractionalPercent(f.delay.perMillion) };
        if (f.abort) {
          cfg.abort = { http_status: f.abort.httpStatus, percentage: fractionalPercent(f.abort.perMillion) };
        }
        return { [NAME]: cfg };
      },
    };
  },
};
