// The ListenerPolicy CRD: HTTP connection manager settings of the Gateways (or the one listener, by sectionName) it
// targets: access logs (a file or /dev/stdout, Envoy's default text format, a text format or a JSON format, filters
// by status code and response flag), idle timeout, x-forwarded-for trust, max request headers size, server header
// transformation, HTTP/1 header case. Shapes after kgateway's HTTPListenerPolicy/ListenerPolicy (accessLog.fileSink,
// filter) and Envoy Gateway's ClientTrafficPolicy; the policy status per ancestor as TrafficPolicy's.
import { conditionColumn } from '../crd.ts';
import { arr, bool, desc, duration, group, int32, obj, objectName, sectionName, str } from '../schema-blocks.ts';
import { policyAncestorStatus } from './traffic-policy.ts';
import { vendorCrd } from './vendor-crd.ts';

/** Envoy's response flag short names (envoy.config.accesslog.v3.ResponseFlagFilter's PGV list). */
export const RESPONSE_FLAGS = [
  'LH',
  'UH',
  'UT',
  'LR',
  'UR',
  'UF',
  'UC',
  'UO',
  'NR',
  'DI',
  'FI',
  'RL',
  'UAEX',
  'RLSE',
  'DC',
  'URX',
  'SI',
  'IH',
  'DPE',
  'UMSDR',
  'RFCF',
  'NFCF',
  'DT',
  'UPE',
  'NC',
  'OM',
  'DF',
  'DO',
  'DR',
];

const accessLog = () =>
  obj(
    {
      fileSink: obj(
        {
          path: desc(
            'A file path in the proxy pod, or /dev/stdout (kubectl logs).',
            str({ minLength: 1, pattern: '^/' }),
          ),
          stringFormat: desc(
            "Envoy's text format with %COMMAND% operators; neither this nor jsonFormat: Envoy's default format.",
            str({ minLength: 1 }),
          ),
          jsonFormat: desc('A JSON object whose string values are formats, one object a line.', {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
          }),
        },
        ['path'],
        {
          'x-kubernetes-validations': [
            {
              rule: '!(has(self.stringFormat) && has(self.jsonFormat))',
              message: 'set at most one of stringFormat and jsonFormat',
            },
          ],
        },
      ),
      filter: desc(
        'Which requests are logged: statusCode compares the response code (a request with none compares 0), ' +
          'responseFlags keeps requests with any of the flags; with both, a request must match both.',
        obj({
          statusCode: obj({ op: str({ enum: ['EQ', 'GE', 'LE'] }), value: int32({ minimum: 0, maximum: 999 }) }, [
            'op',
            'value',
          ]),
          responseFlags: arr(str({ enum: RESPONSE_FLAGS }), { minItems: 1, maxItems: 32 }),
        }),
      ),
    },
    ['fileSink'],
  );

export function listenerPolicyCrd(): Record<string, unknown> {
  return vendorCrd({
    kind: 'ListenerPolicy',
    plural: 'listenerpolicies',
    shortNames: ['lp'],
    description:
      'ListenerPolicy sets the HTTP connection manager of the Gateways it targets (sectionName: one listener, and so ' +
      'its port): access logs, idle timeout, x-forwarded-for trust, max request headers, server header, header case. ' +
      'One policy applies per port: one naming a listener beats one naming the Gateway, then the older one wins.',
    spec: obj(
      {
        targetRefs: arr(
          obj(
            {
              group: group(),
              kind: str({ enum: ['Gateway'] }),
              name: objectName(),
              sectionName: desc('A listener name of the Gateway.', sectionName()),
            },
            ['group', 'kind', 'name'],
          ),
          { minItems: 1, maxItems: 16 },
        ),
        accessLog: arr(accessLog(), { maxItems: 8 }),
        idleTimeout: desc('Closes a downstream connection idle this long (Envoy default 1h).', duration()),
        xffNumTrustedHops: desc(
          'Trusted proxies in front of the Gateway (x-forwarded-for).',
          int32({ minimum: 0, maximum: 16 }),
        ),
        useRemoteAddress: desc(
          'The connection peer is the client address (and is appended to x-forwarded-for).',
          bool(),
        ),
        maxRequestHeadersKb: desc(
          'Larger request headers get 431 (Envoy default 60).',
          int32({ minimum: 1, maximum: 8192 }),
        ),
        serverHeaderTransformation: str({ enum: ['Overwrite', 'AppendIfAbsent', 'PassThrough'] }),
        preserveHttp1HeaderCase: desc('Keep the case of HTTP/1 header names as received.', bool()),
      },
      ['targetRefs'],
    ),
    status: policyAncestorStatus(),
    columns: [conditionColumn('Accepted'), conditionColumn('Attached', 'reason')],
  });
}
