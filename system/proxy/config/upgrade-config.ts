// The `upgrade_configs` of an HTTP connection manager and of a route (RouteAction.upgrade_configs), compiled, and
// Envoy's decision whether an upgrade may go on (source/extensions/filters/network/http_connection_manager/config.cc
// createUpgradeFilterChain): a route's entry, enabled or not, decides ("upgrades explicitly not allowed on a route
// trump upgrades allowed in the HCM config"); else the HCM's entry, `enabled` defaulting to true; no entry: refused.
// Types are matched case-insensitively. The flow of an upgrade is described in http/upgrade.ts.
import { ConfigError } from './errors.ts';

type J = Record<string, any>;

/** upgrade_type → enabled, keys lower-cased (Envoy matches upgrade types case-insensitively). */
export type UpgradeMap = Map<string, boolean>;

/** An HCM's or a route's `upgrade_configs`; `filters` (HCM) and `connect_config` (route) are not supported. */
export function compileUpgradeConfigs(list: unknown, where: string): UpgradeMap {
  const out: UpgradeMap = new Map();
  for (const [i, u] of ((list ?? []) as J[]).entries()) {
    const here = `${where}.upgrade_configs[${i}]`;
    const type = String(u.upgrade_type ?? '');
    if (!type) throw new ConfigError(`${here}.upgrade_type: value length must be at least 1 characters`);
    if (u.filters?.length) throw new ConfigError(`${here}.filters: upgrade filter chains are not supported`);
    if (u.connect_config) throw new ConfigError(`${here}.connect_config: CONNECT termination is not supported`);
    if (out.has(type.toLowerCase())) throw new ConfigError(`${here}: Duplicate upgrade ${type}`);
    out.set(type.toLowerCase(), u.enabled !== false);
  }
  return out;
}

/** Envoy's createUpgradeFilterChain: a route's entry decides (enabled or not); else the HCM's enabled entry. */
export function upgradeAllowed(hcm: UpgradeMap, route: UpgradeMap | undefined, type: string): boolean {
  const r = route?.get(type);
  if (r !== undefined) return r;
  return hcm.get(type) === true;
}
