// The HTTPRoute CRD (gateway.networking.k8s.io/v1): parent references, hostnames, rules (matches, filters, weighted
// backends, timeouts); the route status per parent.
import {
  arr,
  backendObjectReference,
  conditions,
  controllerName,
  duration,
  group,
  headerFilter,
  headerName,
  hostname,
  int32,
  kind,
  obj,
  objectName,
  parentReference,
  pathModifier,
  port,
  preciseHostname,
  type Schema,
  sectionName,
  str,
} from '../schema-blocks.ts';
import { gatewayApiCrd } from './bundle.ts';

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];

const httpRouteFilter = (): Schema =>
  obj(
    {
      type: str({
        enum: [
          'RequestHeaderModifier',
          'ResponseHeaderModifier',
          'RequestMirror',
          'RequestRedirect',
          'URLRewrite',
          'ExtensionRef',
        ],
      }),
      requestHeaderModifier: headerFilter(),
      responseHeaderModifier: headerFilter(),
      requestMirror: obj(
        {
          backendRef: backendObjectReference(),
          percent: int32({ minimum: 0, maximum: 100 }),
          fraction: obj({ numerator: int32({ minimum: 0 }), denominator: int32({ minimum: 1, default: 100 }) }, [
            'numerator',
          ]),
        },
        ['backendRef'],
      ),
      requestRedirect: obj({
        scheme: str({ enum: ['http', 'https'] }),
        hostname: preciseHostname(),
        path: pathModifier(),
        port: port(),
        statusCode: { type: 'integer', enum: [301, 302, 303, 307, 308], default: 302 },
      }),
      urlRewrite: obj({ hostname: preciseHostname(), path: pathModifier() }),
      extensionRef: obj({ group: group(), kind: kind(), name: objectName() }, ['group', 'kind', 'name']),
    },
    ['type'],
  );

const httpRouteMatch = (): Schema =>
  obj({
    path: obj(
      {
        type: str({ enum: ['Exact', 'PathPrefix', 'RegularExpression'], default: 'PathPrefix' }),
        value: str({ maxLength: 1024, default: '/' }),
      },
      undefined,
      { default: { type: 'PathPrefix', value: '/' } },
    ),
    headers: arr(
      obj(
        {
          type: str({ enum: ['Exact', 'RegularExpression'], default: 'Exact' }),
          name: headerName(),
          value: str({ maxLength: 4096 }),
        },
        ['name', 'value'],
      ),
      { maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
    ),
    queryParams: arr(
      obj(
        {
          type: str({ enum: ['Exact', 'RegularExpression'], default: 'Exact' }),
          name: headerName(),
          value: str({ minLength: 1, maxLength: 1024 }),
        },
        ['name', 'value'],
      ),
      { maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
    ),
    method: str({ enum: HTTP_METHODS }),
  });

const httpRouteSpec = (): Schema =>
  obj({
    parentRefs: arr(parentReference(), { maxItems: 32 }),
    hostnames: arr(hostname(), { maxItems: 16 }),
    rules: arr(
      obj({
        name: sectionName(),
        matches: arr(httpRouteMatch(), { maxItems: 64, default: [{ path: { type: 'PathPrefix', value: '/' } }] }),
        filters: arr(httpRouteFilter(), { maxItems: 16 }),
        backendRefs: arr(
          obj(
            {
              ...(backendObjectReference().properties as Record<string, Schema>),
              weight: int32({ minimum: 0, maximum: 1000000, default: 1 }),
              filters: arr(httpRouteFilter(), { maxItems: 16 }),
            },
            ['name'],
          ),
          { maxItems: 16 },
        ),
        timeouts: obj({ request: duration(), backendRequest: duration() }),
      }),
      { maxItems: 16, default: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }] },
    ),
  });

const routeStatus = (): Schema =>
  obj(
    {
      parents: arr(
        obj(
          { parentRef: parentReference(), controllerName: controllerName(), conditions: conditions({ minItems: 1 }) },
          ['conditions', 'controllerName', 'parentRef'],
        ),
        { maxItems: 32 },
      ),
    },
    ['parents'],
  );

export function httpRouteCrd(): Record<string, unknown> {
  return gatewayApiCrd({
    kind: 'HTTPRoute',
    plural: 'httproutes',
    scope: 'Namespaced',
    version: 'v1',
    description:
      'HTTPRoute provides a way to route HTTP requests by hostname, path, header or query param, to backends.',
    spec: httpRouteSpec(),
    status: routeStatus(),
    columns: [{ name: 'Hostnames', type: 'string', jsonPath: '.spec.hostnames' }],
  });
}
