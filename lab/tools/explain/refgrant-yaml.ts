// The ReferenceGrant that would allow a cross-namespace reference, as YAML ready for `kubectl apply -f -`
// (contract section 7, rule 3: created in the namespace of the referenced object), at the version the control plane
// reads (system/controlplane/kube/watched.ts: v1, served since Gateway API v1.5.0).
import { stringify } from 'yaml';
import { watchedKind } from '../../../system/controlplane/kube/watched.ts';

export interface GrantFrom {
  group: string;
  kind: string;
  namespace: string;
}
export interface GrantTo {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** A DNS-1123 name that says what the grant allows. */
function grantName(from: GrantFrom, to: GrantTo): string {
  return `allow-${from.kind}-${from.namespace}-to-${to.kind}-${to.name}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 63)
    .replace(/-+$/, '');
}

export function referenceGrantYaml(from: GrantFrom, to: GrantTo): string {
  return stringify({
    apiVersion: watchedKind('ReferenceGrant')!.apiVersion,
    kind: 'ReferenceGrant',
    metadata: { name: grantName(from, to), namespace: to.namespace },
    spec: {
      from: [{ group: from.group, kind: from.kind, namespace: from.namespace }],
      // Named: the grant allows this one Service, not every Service of the namespace.
      to: [{ group: to.group, kind: to.kind, name: to.name }],
    },
  });
}
