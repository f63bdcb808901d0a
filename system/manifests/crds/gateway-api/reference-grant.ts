// The ReferenceGrant CRD (gateway.networking.k8s.io/v1beta1): which kinds of which namespaces may refer to which
// objects of the namespace it lives in.
import { arr, group, kind, namespace, obj, objectName } from '../schema-blocks.ts';
import { gatewayApiCrd } from './bundle.ts';

export function referenceGrantCrd(): Record<string, unknown> {
  return gatewayApiCrd({
    kind: 'ReferenceGrant',
    plural: 'referencegrants',
    shortNames: ['refgrant'],
    scope: 'Namespaced',
    version: 'v1beta1',
    description:
      'ReferenceGrant allows objects in other namespaces to refer to objects in the namespace it lives in (the "to" side).',
    spec: obj(
      {
        from: arr(obj({ group: group(), kind: kind(), namespace: namespace() }, ['group', 'kind', 'namespace']), {
          minItems: 1,
          maxItems: 16,
        }),
        to: arr(obj({ group: group(), kind: kind(), name: objectName() }, ['group', 'kind']), {
          minItems: 1,
          maxItems: 16,
        }),
      },
      ['from', 'to'],
    ),
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  });
}
