// TrafficPolicy `buffer` → envoy.filters.http.buffer, as Envoy Gateway sets it: in the chain disabled by default
// (its own max_request_bytes the listener's largest limit, never used), and on each route with a limit
// BufferPerRoute{buffer: {max_request_bytes}}, which turns it on there with that route's limit.
import type { RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.buffer';
const BUFFER = 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer';
const BUFFER_PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.BufferPerRoute';

export const bufferFilter = {
  forListener(routes: readonly RouteIR[]) {
    const limits = routes.flatMap((r) => r.policy.buffer?.maxRequestBytes ?? []);
    return {
      chain: limits.length
        ? [{ name: NAME, typed_config: { '@type': BUFFER, max_request_bytes: Math.max(...limits) }, disabled: true }]
        : [],
      perRoute(r: RouteIR): Json {
        const b = r.policy.buffer;
        return b ? { [NAME]: { '@type': BUFFER_PER_ROUTE, buffer: { max_request_bytes: b.maxRequestBytes } } } : {};
      },
    };
  },
};
