// The GatewayExtension CRD: a feature backed by a service, today external auth over HTTP (the service, path prefix,
// timeout, headers passed on) or over gRPC (Envoy's Authorization/Check service: the service, its timeout), with
// failOpen and the status on error. Shapes after kgateway's GatewayExtension (extAuth.grpcService.backendRef).
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

const serviceRef = () => obj({ name: objectName(), namespace: namespace(), port: port() }, ['name', 'port']);

/** A gRPC service the proxy calls (Envoy's GrpcService.envoy_grpc: a cluster made of the Service port). */
const grpcService = (what: string, withTimeout = true) =>
  desc(
    `The ${what} service, spoken to over gRPC (HTTP/2 in the clear).`,
    obj(
      {
        backendRef: serviceRef(),
        authority: desc('The :authority of the calls; default the Service’s cluster name.', str({ minLength: 1 })),
        ...(withTimeout ? { timeout: duration() } : {}),
      },
      ['backendRef'],
    ),
  );

export function gatewayExtensionCrd(): Record<string, unknown> {
  return vendorCrd({
    kind: 'GatewayExtension',
    plural: 'gatewayextensions',
    shortNames: ['gwe'],
    description:
      'GatewayExtension enables a feature backed by a service, such as external auth. A backendRef to a Service in ' +
      'another namespace needs a ReferenceGrant in that namespace (from gateway.gwvendor.dev/GatewayExtension).',
    spec: obj(
      {
        extAuth: obj(
          {
            grpcService: grpcService('authorization (envoy.service.auth.v3.Authorization/Check)'),
            httpService: obj(
              {
                backendRef: serviceRef(),
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
          [],
          {
            'x-kubernetes-validations': [
              {
                rule: 'has(self.httpService) != has(self.grpcService)',
                message: 'set exactly one of httpService and grpcService',
              },
            ],
          },
        ),
        rateLimit: desc(
          'A global rate-limit service (envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) that TrafficPolicy ' +
            'rateLimit.global sends its descriptors to.',
          obj(
            {
              grpcService: grpcService('rate-limit', false),
              domain: desc('The domain the service counts the descriptors in.', str({ minLength: 1, maxLength: 253 })),
              timeout: desc('How long a call may take (default 20ms, as Envoy’s).', duration()),
              failOpen: desc(
                'Let requests through when the service cannot be reached (Envoy’s failure_mode_deny: false). Default true.',
                bool({ default: true }),
              ),
            },
            ['grpcService', 'domain'],
          ),
        ),
        extProc: desc(
          'An external processor (envoy.service.ext_proc.v3.ExternalProcessor/Process) that TrafficPolicy extProc sends ' +
            'each request’s headers to: it may change them or answer the request itself.',
          obj(
            {
              grpcService: grpcService('processor', false),
              processingMode: obj({
                requestHeaders: desc(
                  'Send the request headers (default) or skip them.',
                  str({ enum: ['Send', 'Skip'] }),
                ),
              }),
              messageTimeout: desc(
                'How long the processor may take to answer (default 200ms, as Envoy’s).',
                duration(),
              ),
              failOpen: desc(
                'Let requests through when the processor fails or is late (default false).',
                bool({ default: false }),
              ),
            },
            ['grpcService'],
          ),
        ),
      },
      [],
      {
        'x-kubernetes-validations': [
          {
            rule: '[has(self.extAuth), has(self.rateLimit), has(self.extProc)].filter(x, x).size() == 1',
            message: 'set exactly one of extAuth, rateLimit and extProc',
          },
        ],
      },
    ),
    status: obj({ conditions: conditions() }),
    columns: [conditionColumn('Accepted'), conditionColumn('ResolvedRefs', 'reason')],
  });
}
