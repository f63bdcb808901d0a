// HTTP filter factories by config type URL, as Envoy finds them (by the typed_config's type, not the name).
import { ConfigError } from '../config/errors.ts';
import { bufferFactory } from './buffer.ts';
import { compressorFactory } from './compressor.ts';
import { corsFactory } from './cors.ts';
import { DISABLED, ENABLED, isDisabled } from './disabled.ts';
import { extAuthzFactory } from './ext-authz.ts';
import { extProcFactory } from './ext-proc.ts';
import { faultFactory } from './fault.ts';
import type { FilterContext, FilterFactory, HttpFilter, J } from './filter-api.ts';
import { headerMutationFactory } from './header-mutation.ts';
import { healthCheckFactory } from './health-check.ts';
import { jwtAuthnFactory } from './jwt-authn.ts';
import { localRateLimitFactory } from './local-ratelimit.ts';
import { rateLimitFactory } from './ratelimit.ts';
import { rbacFactory } from './rbac.ts';
import { routerFactory } from './router/router.ts';

export const FACTORIES: readonly FilterFactory[] = [
  routerFactory,
  corsFactory,
  localRateLimitFactory,
  rateLimitFactory,
  extAuthzFactory,
  extProcFactory,
  faultFactory,
  healthCheckFactory,
  rbacFactory,
  jwtAuthnFactory,
  bufferFactory,
  compressorFactory,
  headerMutationFactory,
];

const byConfigType = new Map<string, FilterFactory>();
const byPerRouteType = new Map<string, FilterFactory>();
for (const f of FACTORIES) {
  for (const t of f.configTypes) byConfigType.set(t, f);
  for (const t of f.perRouteTypes) byPerRouteType.set(t, f);
}

function typeName(any: J | undefined): string {
  const url = String(any?.['@type'] ?? '');
  return url.slice(url.lastIndexOf('/') + 1);
}

export { DISABLED, ENABLED, isDisabled };

/**
 * Builds one http_filters[] entry (named; filter-chain.ts checks the chain's rules). Returns undefined for an
 * optional filter this proxy does not know; throws ConfigError for an unknown required filter (Envoy's "Didn't find
 * a registered implementation"). A filter with `disabled: true` is built and kept in the chain (`disabled`): Envoy
 * skips it unless a route's typed_per_filter_config names it (with a config, or a FilterConfig with
 * `disabled: false`). `factoryName` is the factory's canonical name, as Envoy's chain errors print it.
 */
export function createFilter(
  entry: J,
  where: string,
  ctx: FilterContext,
): { filter: HttpFilter; terminal: boolean; disabled: boolean; factoryName: string } | undefined {
  const name = String(entry.name ?? '');
  if (entry.config_discovery) throw new ConfigError(`${where}.config_discovery: ECDS is not supported`);
  const type = typeName(entry.typed_config);
  const factory = byConfigType.get(type);
  if (!factory) {
    if (entry.is_optional === true) {
      ctx.logs
        .logger('config')
        .warn(
          `Didn't find a registered implementation for '${name}' with type URL: '${type}': optional filter skipped`,
        );
      return undefined;
    }
    throw new ConfigError(`Didn't find a registered implementation for '${name}' with type URL: '${type}'`);
  }
  return {
    filter: factory.create(name, entry.typed_config ?? {}, ctx),
    terminal: factory.terminal === true,
    disabled: entry.disabled === true,
    factoryName: factory.canonicalName,
  };
}

/** Compiles a typed_per_filter_config value; undefined when the filter ignores per-route config. */
export function parsePerFilterConfig(any: J, where: string): unknown {
  let inner = any;
  let optional = false;
  if (typeName(any) === 'envoy.config.route.v3.FilterConfig') {
    optional = any.is_optional === true;
    if (any.disabled === true) return DISABLED;
    // `disabled: false` with no config only enables a filter the HCM chain disables by default.
    if (any.config === undefined) return ENABLED;
    inner = any.config;
  }
  const type = typeName(inner);
  const factory = byPerRouteType.get(type);
  if (!factory) {
    if (optional) return undefined;
    throw new ConfigError(
      `${where}: Didn't find a registered implementation for per-route config with type URL: '${type}'`,
    );
  }
  return factory.parsePerRoute ? factory.parsePerRoute(inner, where) : inner;
}
