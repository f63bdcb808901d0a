// The Gateway CRD (gateway.networking.k8s.io/v1): listeners with their allowed routes, addresses, infrastructure;
// the status with addresses, conditions and per-listener attached routes.
import { conditionColumn } from '../crd.ts';
import {
  arr,
  conditions,
  group,
  hostname,
  int32,
  kind,
  labelSelector,
  obj,
  objectName,
  port,
  type Schema,
  sectionName,
  str,
  strMap,
} from '../schema-blocks.ts';
import { gatewayApiCrd } from './bundle.ts';

const gatewaySpec = (): Schema =>
  obj(
    {
      gatewayClassName: objectName(),
      listeners: arr(
        obj(
          {
            name: sectionName(),
            hostname: hostname(),
            port: port(),
            protocol: str({
              minLength: 1,
              maxLength: 255,
              pattern:
                '^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$',
            }),
            allowedRoutes: obj(
              {
                kinds: arr(
                  obj({ group: { ...group(), default: 'gateway.networking.k8s.io' }, kind: kind() }, ['kind']),
                  {
                    maxItems: 8,
                  },
                ),
                namespaces: obj(
                  { from: str({ enum: ['All', 'Selector', 'Same'], default: 'Same' }), selector: labelSelector() },
                  undefined,
                  { default: { from: 'Same' } },
                ),
              },
              undefined,
              { default: { namespaces: { from: 'Same' } } },
            ),
          },
          ['name', 'port', 'protocol'],
        ),
        { minItems: 1, maxItems: 64, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
      ),
      addresses: arr(
        obj(
          {
            type: str({
              minLength: 1,
              maxLength: 253,
              default: 'IPAddress',
              pattern:
                "^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$",
            }),
            value: str({ maxLength: 253 }),
          },
          undefined,
        ),
        { maxItems: 16 },
      ),
      infrastructure: obj({
        labels: strMap({ maxProperties: 8 }),
        annotations: strMap({ maxProperties: 8 }),
        parametersRef: obj({ group: group(), kind: kind(), name: str({ minLength: 1, maxLength: 253 }) }, [
          'group',
          'kind',
          'name',
        ]),
      }),
    },
    ['gatewayClassName', 'listeners'],
  );

const gatewayStatus = (): Schema =>
  obj({
    addresses: arr(
      obj(
        {
          type: str({ minLength: 1, maxLength: 253, default: 'IPAddress' }),
          value: str({ minLength: 1, maxLength: 253 }),
        },
        ['value'],
      ),
      { maxItems: 16 },
    ),
    conditions: conditions(),
    listeners: arr(
      obj(
        {
          name: sectionName(),
          supportedKinds: arr(obj({ group: group(), kind: kind() }, ['kind']), { maxItems: 8 }),
          attachedRoutes: int32(),
          conditions: conditions(),
        },
        ['attachedRoutes', 'conditions', 'name'],
      ),
      { maxItems: 64, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
    ),
  });

export function gatewayCrd(): Record<string, unknown> {
  return gatewayApiCrd({
    kind: 'Gateway',
    plural: 'gateways',
    shortNames: ['gtw'],
    scope: 'Namespaced',
    version: 'v1',
    description:
      'Gateway represents an instance of a service-traffic handling infrastructure by binding Listeners to a set of IP addresses.',
    spec: gatewaySpec(),
    status: gatewayStatus(),
    columns: [
      { name: 'Class', type: 'string', jsonPath: '.spec.gatewayClassName' },
      { name: 'Address', type: 'string', jsonPath: '.status.addresses[*].value' },
      conditionColumn('Programmed'),
    ],
  });
}
