// The GatewayExtension CRD: a feature backed by a service, today external auth over HTTP (the service, path prefix,
// timeout, headers passed on, failOpen and the status on error).
import { conditionColumn } from '../crd.ts';
import {
  arr,
  bool,
  conditions,
  desc,
  duration,
  headerName,
  int32,
  namespace,
  obj,
  objectName,
  port,
  str,
} from '../schema-blocks.ts';
import { vendorCrd } from './vendor-crd.ts';

export function gatewayExtensionCrd(): Record<string, unknown> {
  return vendorCrd({
    kind: 'GatewayExtension',
    plural: 'gatewayextensions',
    shortNames: ['gwe'],
    description:
      'GatewayExtension enables a feature backed by a service, such as external auth. A backendRef to a Service in ' +
      'another namespace needs a ReferenceGrant in that namespace (from gateway.gwvendor.dev/GatewayExtension).',
    spec: obj({
      extAuth: obj(
        {
          httpService: obj(
            {
              backendRef: obj({ name: objectName(), namespace: namespace(), port: port() }, ['name', 'port']),
              pathPrefix: str({ pattern: '^/' }),
              timeout: duration(),
              allowedHeaders: desc(
                'Request headers passed on to the auth service (besides Envoy’s defaults).',
                arr(headerName(), { default: ['x-ext-authz'] }),
              ),
            },
            ['backendRef'],
          ),
          failOpen: desc('Let requests through when the auth service cannot be reached.', bool({ default: false })),
          statusOnError: desc(
            'HTTP status returned when the auth service cannot be reached (and failOpen is false).',
            int32({ minimum: 100, maximum: 599, default: 403 }),
          ),
        },
        ['httpService'],
      ),
    }),
    status: obj({ conditions: conditions() }),
    columns: [conditionColumn('Accepted'), conditionColumn('ResolvedRefs', 'reason')],
  });
}
