// A TrafficPolicy field that names a GatewayExtension (extAuth.extensionRef, rateLimit.global.extensionRef): the one
// resolution of that reference, with the outcome the policy's ResolvedRefs condition shows (not found, invalid, its
// backend unresolved, or resolved) and the field it is about.
import type { PolicyField } from '../model.ts';
import type { ExtensionInfo } from './extensions.ts';
import type { Outcome } from './types.ts';

/** How a GatewayExtension a field names resolved, and that field. */
export type ExtensionRefs = Outcome & { extension: string; field: PolicyField };

/** What resolving an extension reference reads: the extensions of the world (policies.ts PolicyWorld has it). */
export interface ExtensionWorld {
  extension(namespace: string, name: string): ExtensionInfo | undefined;
}

export function resolvePolicyExtension<T>(
  field: PolicyField,
  ns: string,
  name: string | undefined,
  world: ExtensionWorld,
  pick: (e: ExtensionInfo) => T | undefined,
  what: string,
): { value?: T; refs: ExtensionRefs } {
  const extension = `${ns}/${name ?? ''}`;
  const fail = (reason: string, message: string) => ({ refs: { ok: false, reason, message, extension, field } });
  const ext = name ? world.extension(ns, name) : undefined;
  if (!ext) return fail('BackendNotFound', `GatewayExtension ${extension} not found`);
  if (!ext.accepted.ok) return fail('Invalid', `GatewayExtension ${extension}: ${ext.accepted.message}`);
  if (!ext.resolvedRefs.ok) {
    return fail(
      ext.resolvedRefs.reason,
      `${what} not applied: GatewayExtension ${extension}: ${ext.resolvedRefs.message}`,
    );
  }
  const value = pick(ext);
  if (value === undefined) {
    return fail('InvalidKind', `${what} not applied: GatewayExtension ${extension} is not of the kind ${field} needs`);
  }
  return {
    value,
    refs: { ok: true, reason: 'ResolvedRefs', message: `GatewayExtension ${extension} resolved`, extension, field },
  };
}
