// envoy.filters.http.rbac: role-based access control on the request (Envoy's rbac_filter.cc and
// filters/common/rbac/engine_impl.cc). An RBAC `rules` engine: a policy matches when one of its permissions and one
// of its principals match; ALLOW lets through only requests some policy matches, DENY refuses those (LOG only
// counts). A route's RBACPerRoute replaces the filter's engine (an RBACPerRoute without `rbac` has none: allowed).
// No engine: allowed, nothing counted. Denied: 403 `RBAC: access denied`, details
// `rbac_access_denied_matched_policy[<policy>|none]`; stats `http.<prefix>.rbac.allowed|denied`, and `shadow_*` for
// `shadow_rules`. Principals: any, direct_remote_ip, remote_ip (the client address the connection manager took from
// x-forwarded-for and xff_num_trusted_hops), source_ip, header, and_ids/or_ids/not_id; permissions: any, header, url_path,
// destination_port, and_rules/or_rules/not_rule. Other kinds, `matcher` and `shadow_matcher` are NACKed.
import { BlockList, isIP } from 'node:net';
import { ConfigError } from '../config/errors.ts';
import { compileHeaderMatcher, compileStringMatcher } from '../config/matchers.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';

type Check = (s: FilterStream) => boolean;

interface Engine {
  action: 'ALLOW' | 'DENY' | 'LOG';
  policies: { name: string; matches: Check }[];
}

/** `::ffff:10.0.0.1` (a v4 peer on a dual-stack socket) → `10.0.0.1`; `host:port` → host. */
function ipOf(addr: string | undefined): string | undefined {
  if (!addr) return undefined;
  let a = addr.trim();
  if (isIP(a) === 0) {
    const i = a.lastIndexOf(':');
    a = a.startsWith('[') ? a.slice(1, a.indexOf(']')) : a.slice(0, i);
  }
  if (a.startsWith('::ffff:') && isIP(a.slice(7)) === 4) a = a.slice(7);
  return isIP(a) ? a : undefined;
}

/** The connection's peer (Envoy's directRemoteAddress). */
const directRemote = (s: FilterStream) => ipOf(s.info.downstreamDirectRemote);

/**
 * The client address (Envoy's downstreamRemoteAddress): the connection manager decided it from x-forwarded-for and
 * xff_num_trusted_hops (http/hcm.ts), the peer when x-forwarded-for gives none.
 */
const remote = (s: FilterStream) => ipOf(s.info.downstreamRemote);

function cidrCheck(c: J, where: string, addr: (s: FilterStream) => string | undefined): Check {
  const prefix = String(c?.address_prefix ?? '');
  const family = isIP(prefix);
  if (!family) throw new ConfigError(`${where}.address_prefix: malformed IP address: ${prefix}`);
  const max = family === 4 ? 32 : 128;
  const len = c.prefix_len === undefined ? 0 : Number(c.prefix_len);
  if (!Number.isInteger(len) || len < 0 || len > max) throw new ConfigError(`${where}.prefix_len: invalid ${len}`);
  const list = new BlockList();
  list.addSubnet(prefix, len, family === 4 ? 'ipv4' : 'ipv6');
  return (s) => {
    const ip = addr(s);
    return ip !== undefined && list.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
  };
}

function headerCheck(h: J, where: string): Check {
  const m = compileHeaderMatcher(h, where);
  return (s) => m(s.header);
}

function principal(p: J, where: string): Check {
  if (p.any === true) return () => true;
  if (p.direct_remote_ip) return cidrCheck(p.direct_remote_ip, `${where}.direct_remote_ip`, directRemote);
  if (p.source_ip) return cidrCheck(p.source_ip, `${where}.source_ip`, directRemote);
  if (p.remote_ip) return cidrCheck(p.remote_ip, `${where}.remote_ip`, remote);
  if (p.header) return headerCheck(p.header, `${where}.header`);
  if (p.and_ids) return all((p.and_ids.ids ?? []) as J[], `${where}.and_ids.ids`, principal);
  if (p.or_ids) return some((p.or_ids.ids ?? []) as J[], `${where}.or_ids.ids`, principal);
  if (p.not_id) {
    const inner = principal(p.not_id, `${where}.not_id`);
    return (s) => !inner(s);
  }
  throw new ConfigError(`${where}: principal ${Object.keys(p).join(',') || '(empty)'} is not supported`);
}

function permission(p: J, where: string): Check {
  if (p.any === true) return () => true;
  if (p.header) return headerCheck(p.header, `${where}.header`);
  if (p.url_path) {
    const m = compileStringMatcher(p.url_path.path, `${where}.url_path.path`);
    return (s) => m(s.path.split('?')[0]!);
  }
  if (p.destination_port !== undefined) {
    const port = Number(p.destination_port);
    return (s) => Number(s.info.downstreamLocal.slice(s.info.downstreamLocal.lastIndexOf(':') + 1)) === port;
  }
  if (p.and_rules) return all((p.and_rules.rules ?? []) as J[], `${where}.and_rules.rules`, permission);
  if (p.or_rules) return some((p.or_rules.rules ?? []) as J[], `${where}.or_rules.rules`, permission);
  if (p.not_rule) {
    const inner = permission(p.not_rule, `${where}.not_rule`);
    return (s) => !inner(s);
  }
  throw new ConfigError(`${where}: permission ${Object.keys(p).join(',') || '(empty)'} is not supported`);
}

function all(list: J[], where: string, f: (x: J, w: string) => Check): Check {
  const checks = list.map((x, i) => f(x, `${where}[${i}]`));
  return (s) => checks.every((c) => c(s));
}

function some(list: J[], where: string, f: (x: J, w: string) => Check): Check {
  const checks = list.map((x, i) => f(x, `${where}[${i}]`));
  return (s) => checks.some((c) => c(s));
}

/** An RBAC message (config.rbac.v3.RBAC) → its engine; policies in name order, as Envoy's map iterates. */
export function compileRbacRules(rules: J | undefined, where: string): Engine | undefined {
  if (!rules) return undefined;
  const action = (rules.action ?? 'ALLOW') as Engine['action'];
  if (!['ALLOW', 'DENY', 'LOG'].includes(action)) throw new ConfigError(`${where}.action: invalid ${action}`);
  const policies = Object.keys(rules.policies ?? {})
    .sort()
    .map((name) => {
      const p = rules.policies[name] as J;
      const at = `${where}.policies[${name}]`;
      if (p.condition || p.checked_condition || p.cel_config) {
        throw new ConfigError(`${at}: CEL conditions are not supported`);
      }
      const perms = some((p.permissions ?? []) as J[], `${at}.permissions`, permission);
      const princ = some((p.principals ?? []) as J[], `${at}.principals`, principal);
      return { name, matches: (s: FilterStream) => perms(s) && princ(s) };
    });
  return { action, policies };
}

interface RbacConfig {
  engine: Engine | undefined;
  shadow: Engine | undefined;
}

function compileRbac(c: J, where: string): RbacConfig {
  if (c.matcher) throw new ConfigError(`${where}.matcher: the matcher API is not supported (use rules)`);
  if (c.shadow_matcher) throw new ConfigError(`${where}.shadow_matcher: the matcher API is not supported`);
  return {
    engine: compileRbacRules(c.rules, `${where}.rules`),
    shadow: compileRbacRules(c.shadow_rules, `${where}.shadow_rules`),
  };
}

/** Allowed, and the policy that decided (ALLOW: the one that matched; DENY: the one that refused). */
function decide(e: Engine, s: FilterStream): { allowed: boolean; policy?: string } {
  const hit = e.policies.find((p) => p.matches(s));
  if (e.action === 'LOG') return { allowed: true, ...(hit ? { policy: hit.name } : {}) };
  if (e.action === 'ALLOW') return { allowed: hit !== undefined, ...(hit ? { policy: hit.name } : {}) };
  return { allowed: hit === undefined, ...(hit ? { policy: hit.name } : {}) };
}

export const rbacFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.rbac',
  configTypes: ['envoy.extensions.filters.http.rbac.v3.RBAC'],
  perRouteTypes: ['envoy.extensions.filters.http.rbac.v3.RBACPerRoute'],
  parsePerRoute: (c, where) => compileRbac(c.rbac ?? {}, `${where}.rbac`),
  create(name, config, ctx) {
    const base = compileRbac(config, 'typed_config');
    const p = `${ctx.statPrefix}rbac.${config.rules_stat_prefix ?? ''}`;
    const allowed = ctx.stats.counter(`${p}allowed`);
    const denied = ctx.stats.counter(`${p}denied`);
    const shadowAllowed = ctx.stats.counter(`${p}shadow_allowed`);
    const shadowDenied = ctx.stats.counter(`${p}shadow_denied`);
    const log = ctx.logs.logger('rbac');
    return {
      name,
      decodeHeaders(s) {
        const cfg = s.perFilterConfig<RbacConfig>(name) ?? base;
        if (cfg.shadow) (decide(cfg.shadow, s).allowed ? shadowAllowed : shadowDenied).inc();
        if (!cfg.engine) return true;
        const d = decide(cfg.engine, s);
        if (d.allowed) {
          if (log.on('debug')) log.debug('enforced allowed', s.tags);
          allowed.inc();
          return true;
        }
        if (log.on('debug')) log.debug(`enforced denied, matched policy ${d.policy ?? 'none'}`, s.tags);
        denied.inc();
        s.sendLocalReply(403, 'RBAC: access denied', {
          details: `rbac_access_denied_matched_policy[${(d.policy ?? 'none').replace(/\s/g, '_')}]`,
          fromFilter: s.filterIndex,
        });
        return false;
      },
    };
  },
};
