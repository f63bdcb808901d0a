// ReferenceGrant: an object may refer to one in another namespace only when a grant in the target's namespace names
// the referrer's group, kind and namespace (from) and the target's group, kind and optionally name (to).
import type { ReferenceGrant } from '../model.ts';

export interface RefFrom {
  group: string;
  kind: string;
  namespace: string;
}
export interface RefTo {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Grants are those of `to.namespace`. Same-namespace references need none. */
export function referenceAllowed(grants: ReferenceGrant[], from: RefFrom, to: RefTo): boolean {
  if (from.namespace === to.namespace) return true;
  return grants.some(
    (g) =>
      g.metadata.namespace === to.namespace &&
      (g.spec?.from ?? []).some(
        (f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace,
      ) &&
      (g.spec?.to ?? []).some((t) => t.group === to.group && t.kind === to.kind && (!t.name || t.name === to.name)),
  );
}

/** The grant that would allow the reference, spelled out for a status message. */
export function missingGrantMessage(from: RefFrom, to: RefTo): string {
  const group = to.group === '' ? 'core' : to.group;
  return (
    `${from.kind} in namespace ${from.namespace} may not refer to ${to.kind} ${to.namespace}/${to.name}: ` +
    `no ReferenceGrant in namespace ${to.namespace} allows it (needed: from group ${from.group}, kind ${from.kind}, ` +
    `namespace ${from.namespace}; to group ${JSON.stringify(to.group)} (${group}), kind ${to.kind})`
  );
}
