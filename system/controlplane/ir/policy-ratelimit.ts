// TrafficPolicy `rateLimit`: `local` (a token bucket in the proxy: envoy.filters.http.local_ratelimit) and `global`
// (descriptors counted by a rate-limit service: envoy.filters.http.ratelimit with the route's rate_limits actions,
// the GatewayExtension of type rateLimit naming the service). Both may be set; the field is one unit of precedence.
// Descriptor entries map onto Envoy's rate limit actions (route_components.proto RateLimit.Action): remoteAddress →
// remote_address, header → request_headers, genericKey → generic_key, as Envoy Gateway and kgateway build them.
import type { TrafficPolicySpec } from '../model.ts';
import type { FieldReader } from './field-reader.ts';
import { type ExtensionRefs, type ExtensionWorld, resolvePolicyExtension } from './policy-extension.ts';
import type { PolicySettings, RateLimitEntryIR } from './types.ts';

type Spec = NonNullable<TrafficPolicySpec['rateLimit']>;

function localSettings(
  l: NonNullable<Spec['local']>,
  r: FieldReader,
): NonNullable<PolicySettings['rateLimit']>['local'] {
  const tb = l.tokenBucket;
  if (!tb) {
    r.problem('spec.rateLimit.local.tokenBucket', 'required');
    return undefined;
  }
  const fillInterval = r.duration('spec.rateLimit.local.tokenBucket.fillInterval', tb.fillInterval);
  if (!fillInterval) return undefined;
  const { percentEnabled, percentEnforced } = l;
  return {
    maxTokens: tb.maxTokens,
    tokensPerFill: tb.tokensPerFill ?? 1,
    fillInterval,
    ...(percentEnabled !== undefined ? { percentEnabled } : {}),
    ...(percentEnforced !== undefined ? { percentEnforced } : {}),
  };
}

function descriptors(g: NonNullable<Spec['global']>, r: FieldReader): RateLimitEntryIR[][] {
  if (!g.descriptors?.length) {
    r.problem('spec.rateLimit.global.descriptors', 'at least one descriptor is required');
    return [];
  }
  return g.descriptors.map((d, i) => {
    const at = `spec.rateLimit.global.descriptors[${i}].entries`;
    if (!d.entries?.length) r.problem(at, 'at least one entry is required');
    return (d.entries ?? []).flatMap((e, j): RateLimitEntryIR[] => {
      const set = [e.remoteAddress, e.header, e.genericKey].filter((x) => x !== undefined).length;
      if (set !== 1) {
        r.problem(`${at}[${j}]`, 'set exactly one of remoteAddress, header and genericKey');
        return [];
      }
      if (e.header) return [{ kind: 'header', name: e.header.name.toLowerCase(), key: e.header.key }];
      if (e.genericKey) {
        return [
          { kind: 'genericKey', value: e.genericKey.value, ...(e.genericKey.key ? { key: e.genericKey.key } : {}) },
        ];
      }
      return [{ kind: 'remoteAddress' }];
    });
  });
}

/** The settings of `rateLimit`, and the resolution of the extension `global` names (for ResolvedRefs). */
export function rateLimitSettings(
  rl: Spec,
  ns: string,
  world: ExtensionWorld,
  r: FieldReader,
): { settings?: PolicySettings['rateLimit']; refs?: ExtensionRefs } {
  if (!rl.local && !rl.global) {
    r.problem('spec.rateLimit', 'set local or global');
    return {};
  }
  const local = rl.local ? localSettings(rl.local, r) : undefined;
  let global: NonNullable<PolicySettings['rateLimit']>['global'];
  let refs: ExtensionRefs | undefined;
  if (rl.global) {
    const d = descriptors(rl.global, r);
    const res = resolvePolicyExtension(
      'rateLimit',
      ns,
      rl.global.extensionRef?.name,
      world,
      (e) => e.rateLimit,
      'rate limit',
    );
    refs = res.refs;
    if (res.value) global = { ext: res.value, descriptors: d };
  }
  if (!local && !global) return refs ? { refs } : {};
  return { settings: { ...(local ? { local } : {}), ...(global ? { global } : {}) }, ...(refs ? { refs } : {}) };
}

/**
 * `rateLimit` merged from several policies' specs (mergeType): the local bucket merges; a global rate limit names a
 * GatewayExtension (resolved with the world, not here), so a merge that carries one does not apply.
 */
export function rateLimitMergeSettings(rl: Spec, r: FieldReader): PolicySettings['rateLimit'] {
  if (rl.global) {
    r.problem('spec.rateLimit.global', 'a global rate limit does not merge (it names a GatewayExtension)');
    return undefined;
  }
  const local = rl.local ? localSettings(rl.local, r) : undefined;
  return local ? { local } : undefined;
}
