// TrafficPolicy `rbac` → envoy.filters.http.rbac: the filter (no rules of its own: Envoy then allows every request)
// on a listener where some route has an RBAC policy, and on that route RBACPerRoute{rbac: {rules}} whose engine
// replaces the filter's (rbac_filter.cc: the most specific per-route config wins). Shapes: envoy/config/rbac/v3.
import type { HeaderMatchIR, RbacIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.rbac';
const RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const RBAC_PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBACPerRoute';

export const rbacFilter = {
  forListener(routes: readonly RouteIR[]) {
    const used = routes.some((r) => r.policy.rbac);
    return {
      chain: used ? [{ name: NAME, typed_config: { '@type': RBAC } }] : [],
      perRoute(r: RouteIR): Json {
        const p = r.policy.rbac;
        return p ? { [NAME]: { '@type': RBAC_PER_ROUTE, rbac: { rules: rbacRules(p) } } } : {};
      },
    };
  },
};

/** A header match as Envoy's config.route.v3.HeaderMatcher (string_match, or present_match). */
export function headerMatcher(h: HeaderMatchIR): Json {
  if (h.present) return { name: h.name, present_match: true };
  if (h.regex !== undefined) return { name: h.name, string_match: { safe_regex: { regex: h.regex } } };
  if (h.prefix !== undefined) return { name: h.name, string_match: { prefix: h.prefix } };
  return { name: h.name, string_match: { exact: h.exact ?? '' } };
}

function rbacRules(p: RbacIR): Json {
  const policies: Json = {};
  for (const pol of p.policies) {
    policies[pol.name] = {
      permissions: pol.permissions.map((x) => ('any' in x ? { any: true } : { header: headerMatcher(x.header) })),
      principals: pol.principals.map((x) => {
        if ('any' in x) return { any: true };
        if ('header' in x) return { header: headerMatcher(x.header) };
        const [key, c] = 'directRemoteIp' in x ? ['direct_remote_ip', x.directRemoteIp] : ['remote_ip', x.remoteIp];
        return { [key]: { address_prefix: c.addressPrefix, prefix_len: c.prefixLen } };
      }),
    };
  }
  // ALLOW is the enum's zero value: canonical proto JSON leaves it out.
  return p.action === 'ALLOW' ? { policies } : { action: p.action, policies };
}
