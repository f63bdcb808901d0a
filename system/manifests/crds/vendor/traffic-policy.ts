// The TrafficPolicy CRD: traffic behaviour (timeouts, retry, CORS, header modifiers, local rate limit, ext auth, URL
// rewrite, fault injection) on the Gateways and HTTPRoutes it targets or selects; the policy status per ancestor.

import { MERGE_TYPES } from '../../../controlplane/ir/policy-merge.ts';
import { conditionColumn } from '../crd.ts';
import {
  arr,
  bool,
  conditions,
  controllerName,
  desc,
  duration,
  group,
  headerFilter,
  headerName,
  int32,
  obj,
  objectName,
  parentReference,
  preciseHostname,
  type Schema,
  sectionName,
  str,
  strMap,
} from '../schema-blocks.ts';
import { policyFieldSchemas } from './traffic-policy-fields.ts';
import { vendorCrd } from './vendor-crd.ts';

export const policyAncestorStatus = (): Schema =>
  obj({
    ancestors: arr(
      obj({ ancestorRef: parentReference(), controllerName: controllerName(), conditions: conditions() }, [
        'ancestorRef',
        'controllerName',
      ]),
      { maxItems: 16 },
    ),
    conditions: conditions(),
  });

const percentage = () => ({ type: 'number', minimum: 0, maximum: 100 });

/** `rateLimit`: a local token bucket and a global rate limit (descriptors for a GatewayExtension's rate-limit service). */
const rateLimitSchema = (): Schema =>
  obj({
    local: obj(
      {
        tokenBucket: obj(
          {
            maxTokens: int32({ minimum: 1 }),
            tokensPerFill: int32({ minimum: 1, default: 1 }),
            fillInterval: duration(),
          },
          ['maxTokens', 'fillInterval'],
        ),
        percentEnabled: desc(
          'Percentage of requests the rate limiter sees (counts); default 100.',
          int32({ minimum: 0, maximum: 100 }),
        ),
        percentEnforced: desc(
          'Percentage of the requests over the limit that are refused (429); the others are only counted. Default 100.',
          int32({ minimum: 0, maximum: 100 }),
        ),
      },
      ['tokenBucket'],
    ),
    global: desc(
      'A global rate limit: each request’s descriptors go to the rate-limit service of a GatewayExtension ' +
        '(type rateLimit), which answers 429 once a descriptor is over its limit.',
      obj(
        {
          extensionRef: obj({ name: objectName() }, ['name']),
          descriptors: arr(
            obj(
              {
                entries: arr(
                  obj(
                    {
                      remoteAddress: desc('The client address (key remote_address).', obj({})),
                      header: desc(
                        'A request header’s value under a descriptor key (no descriptor when it is absent).',
                        obj({ name: headerName(), key: str({ minLength: 1 }) }, ['name', 'key']),
                      ),
                      genericKey: desc(
                        'A fixed value (key generic_key unless set).',
                        obj({ value: str({ minLength: 1 }), key: str({ minLength: 1 }) }, ['value']),
                      ),
                    },
                    [],
                    {
                      'x-kubernetes-validations': [
                        {
                          rule: '[has(self.remoteAddress), has(self.header), has(self.genericKey)].filter(x, x).size() == 1',
                          message: 'set exactly one of remoteAddress, header and genericKey',
                        },
                      ],
                    },
                  ),
                  { minItems: 1, maxItems: 8 },
                ),
              },
              ['entries'],
            ),
            { minItems: 1, maxItems: 16 },
          ),
        },
        ['extensionRef', 'descriptors'],
      ),
    ),
  });

export function trafficPolicyCrd(): Record<string, unknown> {
  return vendorCrd({
    kind: 'TrafficPolicy',
    plural: 'trafficpolicies',
    shortNames: ['tp'],
    description:
      'TrafficPolicy sets traffic behaviour on Gateways and HTTPRoutes it targets (targetRefs) or selects by label ' +
      '(targetSelectors, same namespace). Per top-level field, the more specific attachment wins (route rule > route > ' +
      "listener > gateway), then the older policy (creationTimestamp), then namespace/name; with mergeType the winner's " +
      'fields merge onto the lower-priority ones sub-field by sub-field.',
    spec: obj({
      targetRefs: arr(
        obj(
          {
            group: group(),
            kind: str({ enum: ['Gateway', 'HTTPRoute'] }),
            name: objectName(),
            sectionName: desc('A listener name (Gateway) or a rule name (HTTPRoute).', sectionName()),
          },
          ['group', 'kind', 'name'],
        ),
        { minItems: 1, maxItems: 16 },
      ),
      targetSelectors: arr(
        obj({ group: group(), kind: str({ enum: ['Gateway', 'HTTPRoute'] }), matchLabels: strMap() }, [
          'group',
          'kind',
          'matchLabels',
        ]),
        { maxItems: 16 },
      ),
      mergeType: desc(
        "How this policy's fields merge onto the same fields of lower-priority policies (those it wins over: less " +
          "specific, or younger at its level), as Envoy Gateway's mergeType: StrategicMerge (objects merge, header " +
          'set/add lists and rbac policies by name, remove/CORS/retryOn/statusCodes lists as sets) or JSONMerge (RFC 7386: objects ' +
          'merge, lists replace). Unset: each field it sets replaces theirs. extAuth and jwt never merge.',
        str({ enum: [...MERGE_TYPES] }),
      ),
      timeouts: obj({ request: duration(), streamIdle: duration() }),
      retry: obj(
        {
          attempts: int32({ minimum: 0, maximum: 16 }),
          perTryTimeout: duration(),
          retryOn: arr(
            str({
              enum: [
                '5xx',
                'gateway-error',
                'reset',
                'reset-before-request',
                'connect-failure',
                'envoy-ratelimited',
                'retriable-4xx',
                'refused-stream',
                'retriable-status-codes',
                'http3-post-connect-failure',
              ],
            }),
          ),
          statusCodes: arr(int32({ minimum: 100, maximum: 599 })),
          backoffBaseInterval: duration(),
        },
        ['attempts'],
      ),
      cors: obj({
        allowOrigins: arr(str({ minLength: 1 }), { maxItems: 64 }),
        allowMethods: arr(str({ minLength: 1 }), { maxItems: 16 }),
        allowHeaders: arr(str({ minLength: 1 }), { maxItems: 64 }),
        exposeHeaders: arr(str({ minLength: 1 }), { maxItems: 64 }),
        maxAge: int32({ minimum: 0 }),
        allowCredentials: bool(),
      }),
      headerModifiers: obj({ request: headerFilter(), response: headerFilter() }),
      rateLimit: rateLimitSchema(),
      extAuth: obj({
        extensionRef: obj({ name: objectName() }, ['name']),
        disable: desc('Turns ext auth off for the targets (e.g. a route under a Gateway-wide ext auth).', bool()),
      }),
      extProc: desc(
        'Sends each request’s headers to the external processor of a GatewayExtension (type extProc), which may change ' +
          'them or answer the request.',
        obj({
          extensionRef: obj({ name: objectName() }, ['name']),
          disable: desc('Turns ext proc off for the targets.', bool()),
        }),
      ),
      urlRewrite: obj({
        hostname: preciseHostname(),
        pathRegex: obj({ pattern: str({ minLength: 1 }), substitution: str() }, ['pattern', 'substitution']),
      }),
      faultInjection: obj({
        delay: obj({ fixedDelay: duration(), percentage: percentage() }, ['fixedDelay']),
        abort: obj({ httpStatus: int32({ minimum: 200, maximum: 599 }), percentage: percentage() }, ['httpStatus']),
      }),
      ...policyFieldSchemas(),
    }),
    status: policyAncestorStatus(),
    columns: [conditionColumn('Accepted'), conditionColumn('Attached', 'reason')],
  });
}
