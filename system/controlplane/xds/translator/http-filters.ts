// The HTTP filters TrafficPolicy settings turn on, one file each, in the order the HCM runs them; the router comes
// last (listener.ts). On each listener a filter says what it adds to the chain (nothing when no route there uses it)
// and, per route, its typed_per_filter_config entries. A policy field that needs a new filter is a new file here and
// one line in HTTP_FILTERS.
import type { GatewayIR, ListenerIR, RouteIR } from '../../ir/types.ts';
import { bufferFilter } from './buffer.ts';
import { compressorFilter } from './compressor.ts';
import { corsFilter } from './cors.ts';
import { hasKeys, type Json } from './envoy.ts';
import { extAuthzFilter } from './ext-authz.ts';
import { extProcFilter } from './ext-proc.ts';
import { faultFilter } from './fault.ts';
import { headerMutationFilter } from './header-mutation.ts';
import { jwtAuthnFilter } from './jwt-authn.ts';
import { localRateLimitFilter } from './local-ratelimit.ts';
import { rateLimitFilter } from './ratelimit.ts';
import { rbacFilter } from './rbac.ts';

export interface ListenerFilters {
  /** HCM http_filters entries, in chain order. */
  chain: Json[];
  /** A route's typed_per_filter_config entries (filter name → config); {} for none. */
  perRoute(r: RouteIR): Json;
}

interface HttpFilter {
  /** `routes`: those of the listener a policy or a rule's own CORS filter reaches (no other can use a filter). */
  forListener(routes: readonly RouteIR[], ir: GatewayIR): ListenerFilters;
}

/**
 * In chain order, as Envoy Gateway orders them: cors, buffer, jwt_authn, ext_authz, ext_proc, rbac, local_ratelimit,
 * ratelimit, header mutation (transformation), fault, compressor (then the router).
 */
const HTTP_FILTERS: HttpFilter[] = [
  corsFilter,
  bufferFilter,
  jwtAuthnFilter,
  extAuthzFilter,
  extProcFilter,
  rbacFilter,
  localRateLimitFilter,
  rateLimitFilter,
  headerMutationFilter,
  faultFilter,
  compressorFilter,
];

const NO_FILTERS: ListenerFilters = { chain: [], perRoute: () => ({}) };

/** What the policy filters put on one listener: its chain (without the router) and each route's per-filter config. */
export function filtersFor(l: ListenerIR, ir: GatewayIR): ListenerFilters {
  // Only a route some policy reaches (or with a CORS filter of its own) can need a filter: most listeners have none,
  // and then no filter is asked. Of the others, only filters on the chain are asked per route (a filter not on the
  // chain has no per-route config there either): this runs for every route.
  const reached: RouteIR[] = [];
  for (const v of l.virtualHosts) for (const r of v.routes) if (r.cors || hasKeys(r.policy)) reached.push(r);
  if (!reached.length) return NO_FILTERS;
  const onChain = HTTP_FILTERS.map((f) => f.forListener(reached, ir)).filter((f) => f.chain.length);
  if (!onChain.length) return NO_FILTERS;
  return {
    chain: onChain.flatMap((f) => f.chain),
    perRoute: (r) => {
      const out: Json = {};
      for (const f of onChain) Object.assign(out, f.perRoute(r));
      return out;
    },
  };
}
