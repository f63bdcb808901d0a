// The BackendConfigPolicy CRD: cluster settings (connect timeout, buffer limit, HTTP/1 and HTTP/2 options, load
// balancing, active health checks, outlier detection, circuit breakers) for the Services it targets, shaped after
// kgateway's BackendConfigPolicy (api/v1alpha1/backend_config_policy_types.go); the policy status per ancestor (the
// Gateways whose routes use a targeted Service). Enums, bounds and the load balancer's one-of are in the schema, so
// the API server refuses bad input naming the field; the control plane checks the rest (ir/backend-config-policy.ts).
import { conditionColumn } from '../crd.ts';
import {
  arr,
  bool,
  desc,
  duration,
  headerName,
  int32,
  obj,
  objectName,
  type Schema,
  sectionName,
  str,
} from '../schema-blocks.ts';
import { policyAncestorStatus } from './traffic-policy.ts';
import { vendorCrd } from './vendor-crd.ts';

const hashPolicies = (): Schema =>
  arr(
    obj(
      {
        header: obj({ name: headerName() }, ['name']),
        sourceIP: obj({}),
        queryParameter: obj({ name: str({ minLength: 1, maxLength: 256 }) }, ['name']),
        terminal: desc('Stop at this policy when it yields a value.', bool()),
      },
      [],
      {
        'x-kubernetes-validations': [
          {
            rule: '(has(self.header) ? 1 : 0) + (has(self.sourceIP) ? 1 : 0) + (has(self.queryParameter) ? 1 : 0) == 1',
            message: 'exactly one of header, sourceIP or queryParameter must be set',
          },
        ],
      },
    ),
    { minItems: 1, maxItems: 16 },
  );

const LB_KINDS = ['roundRobin', 'leastRequest', 'random', 'ringHash', 'maglev'];

const loadBalancer = (): Schema =>
  obj(
    {
      healthyPanicThreshold: desc(
        'Percentage of healthy hosts under which the proxy balances across all hosts (Envoy default 50; 0 disables).',
        int32({ minimum: 0, maximum: 100 }),
      ),
      roundRobin: obj({}),
      leastRequest: obj({ choiceCount: int32({ minimum: 2, maximum: 100 }) }),
      random: obj({}),
      ringHash: obj({
        minimumRingSize: int32({ minimum: 1, maximum: 8388608 }),
        maximumRingSize: int32({ minimum: 1, maximum: 8388608 }),
        hashPolicies: hashPolicies(),
      }),
      maglev: obj({ hashPolicies: hashPolicies() }),
    },
    [],
    {
      'x-kubernetes-validations': [
        {
          rule: `${LB_KINDS.map((k) => `(has(self.${k}) ? 1 : 0)`).join(' + ')} <= 1`,
          message: 'at most one of roundRobin, leastRequest, random, ringHash or maglev may be set',
        },
      ],
    },
  );

export function backendConfigPolicyCrd(): Record<string, unknown> {
  return vendorCrd({
    kind: 'BackendConfigPolicy',
    plural: 'backendconfigpolicies',
    shortNames: ['bcp'],
    description:
      'BackendConfigPolicy sets how the Gateway proxies connect to the Services it targets (a port with sectionName): ' +
      'connect timeout, buffer limit, HTTP/1 and HTTP/2 options, load balancing, active health checks, outlier ' +
      'detection and circuit breakers. Per Service port, a policy naming the port wins over one naming the Service, ' +
      'then the older policy (creationTimestamp), then namespace/name.',
    spec: obj(
      {
        targetRefs: arr(
          obj(
            {
              group: str({ enum: [''] }),
              kind: str({ enum: ['Service'] }),
              name: objectName(),
              sectionName: desc('A port name of the Service.', sectionName()),
            },
            ['group', 'kind', 'name'],
          ),
          { minItems: 1, maxItems: 16 },
        ),
        connectTimeout: duration(),
        perConnectionBufferLimitBytes: int32({ minimum: 0 }),
        http1ProtocolOptions: obj({
          enableTrailers: bool(),
          headerFormat: str({ enum: ['ProperCaseHeaderKeyFormat', 'PreserveCaseHeaderKeyFormat'] }),
          overrideStreamErrorOnInvalidHttpMessage: bool(),
        }),
        http2ProtocolOptions: obj({
          initialStreamWindowSize: int32({ minimum: 65535, maximum: 2147483647 }),
          initialConnectionWindowSize: int32({ minimum: 65535, maximum: 2147483647 }),
          maxConcurrentStreams: int32({ minimum: 1, maximum: 2147483647 }),
          overrideStreamErrorOnInvalidHttpMessage: bool(),
        }),
        loadBalancer: loadBalancer(),
        healthCheck: obj(
          {
            http: obj(
              {
                path: str({ minLength: 1, maxLength: 1024, pattern: '^/' }),
                host: str({ minLength: 1, maxLength: 253 }),
                method: str({ enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PATCH'] }),
                expectedStatuses: arr(int32({ minimum: 100, maximum: 599 }), { maxItems: 16 }),
              },
              ['path'],
            ),
            interval: duration(),
            timeout: duration(),
            unhealthyThreshold: int32({ minimum: 1 }),
            healthyThreshold: int32({ minimum: 1 }),
          },
          ['http', 'interval', 'timeout', 'unhealthyThreshold', 'healthyThreshold'],
        ),
        outlierDetection: obj({
          consecutive5xx: int32({ minimum: 1 }),
          interval: duration(),
          baseEjectionTime: duration(),
          maxEjectionPercent: int32({ minimum: 0, maximum: 100 }),
        }),
        circuitBreakers: obj({
          maxConnections: int32({ minimum: 1 }),
          maxPendingRequests: int32({ minimum: 1 }),
          maxRequests: int32({ minimum: 1 }),
          maxRetries: int32({ minimum: 0 }),
          trackRemaining: bool(),
        }),
      },
      ['targetRefs'],
    ),
    status: policyAncestorStatus(),
    columns: [conditionColumn('Accepted'), conditionColumn('Attached', 'reason')],
  });
}
