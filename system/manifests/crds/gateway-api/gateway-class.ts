// The GatewayClass CRD (gateway.networking.k8s.io/v1): the controller name that claims the class, its parametersRef.
import { conditionColumn } from '../crd.ts';
import { conditions, controllerName, group, kind, namespace, obj, str } from '../schema-blocks.ts';
import { gatewayApiCrd } from './bundle.ts';

export function gatewayClassCrd(): Record<string, unknown> {
  return gatewayApiCrd({
    kind: 'GatewayClass',
    plural: 'gatewayclasses',
    shortNames: ['gc'],
    scope: 'Cluster',
    version: 'v1',
    description: 'GatewayClass describes a class of Gateways available to the user for creating Gateway resources.',
    spec: obj(
      {
        controllerName: controllerName(),
        parametersRef: obj(
          { group: group(), kind: kind(), name: str({ minLength: 1, maxLength: 253 }), namespace: namespace() },
          ['group', 'kind', 'name'],
        ),
      },
      ['controllerName'],
    ),
    status: obj({ conditions: conditions() }),
    columns: [{ name: 'Controller', type: 'string', jsonPath: '.spec.controllerName' }, conditionColumn('Accepted')],
  });
}
