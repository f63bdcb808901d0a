// The GatewayParameters CRD: custom settings for the proxies of the Gateways that refer to it (replicas, the proxy's
// log levels, image, resources, arguments and environment, the Service type, pod labels and annotations).
import { arr, bool, desc, int32, obj, type Schema, str, strMap } from '../schema-blocks.ts';
import { vendorCrd } from './vendor-crd.ts';

/** Log level names of the proxy (Envoy's, plus `warn`, which the proxy also accepts). */
export const PROXY_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'warning', 'error', 'critical', 'off'];

const quantityMap = (): Schema => ({
  type: 'object',
  additionalProperties: {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    'x-kubernetes-int-or-string': true,
  },
});

const envVar = (): Schema =>
  obj(
    {
      name: str({ minLength: 1 }),
      value: str(),
      valueFrom: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    ['name'],
  );

const extraMeta = () => ({ extraLabels: strMap(), extraAnnotations: strMap() });

export function gatewayParametersCrd(): Record<string, unknown> {
  return vendorCrd({
    kind: 'GatewayParameters',
    plural: 'gatewayparameters',
    singular: 'gatewayparameters',
    shortNames: ['gwp'],
    description:
      'GatewayParameters holds custom settings for the proxies of the Gateways that refer to it (spec.infrastructure.parametersRef).',
    spec: obj({
      kube: obj({
        deployment: obj({ replicas: int32({ minimum: 0 }) }),
        envoyContainer: obj({
          bootstrap: obj({
            logLevel: desc(
              'Log level of the proxy (its --log-level).',
              str({ enum: PROXY_LOG_LEVELS, default: 'info' }),
            ),
            componentLogLevels: desc(
              'Per-component levels (its --component-log-level), e.g. {upstream: debug, connection: trace}.',
              { type: 'object', additionalProperties: str({ enum: PROXY_LOG_LEVELS }) },
            ),
          }),
          image: obj({
            registry: str(),
            repository: str(),
            tag: str(),
            digest: str(),
            pullPolicy: str({ enum: ['Always', 'IfNotPresent', 'Never'] }),
          }),
          resources: obj({ limits: quantityMap(), requests: quantityMap() }),
          extraArgs: desc('Appended to the proxy command line.', arr(str())),
          env: arr(envVar()),
        }),
        service: obj({
          type: str({ enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] }),
          ...extraMeta(),
        }),
        podTemplate: obj({ ...extraMeta(), nodeSelector: strMap() }),
      }),
      defaultAccessLog: desc(
        "A stdout access log in Envoy's default format on every listener of these Gateways that no ListenerPolicy " +
          'gives an access log (kubectl logs of a proxy shows a line per request).',
        obj({ enabled: bool() }),
      ),
    }),
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    columns: [{ name: 'LogLevel', type: 'string', jsonPath: '.spec.kube.envoyContainer.bootstrap.logLevel' }],
  });
}
