// The CRDs the project ships: the Gateway API kinds and fields gwlab supports (at their upstream groups and versions,
// with the upstream constraints of those fields) and the vendor kinds of gateway.gwvendor.dev. The YAML files next to
// this module are generated from it (`node system/manifests/crds/generate.ts`); crds.test.ts checks that they agree,
// that every schema is structural, and that each Gateway API field matches @kubernetes-models/gateway-api.

export type Schema = Record<string, unknown>;

// ---- building blocks -------------------------------------------------------------------------------------------

const str = (o: Schema = {}): Schema => ({ type: 'string', ...o });
const int32 = (o: Schema = {}): Schema => ({ type: 'integer', format: 'int32', ...o });
const bool = (o: Schema = {}): Schema => ({ type: 'boolean', ...o });
const arr = (items: Schema, o: Schema = {}): Schema => ({ type: 'array', items, ...o });
const strMap = (o: Schema = {}): Schema => ({ type: 'object', additionalProperties: { type: 'string' }, ...o });
function obj(properties: Record<string, Schema>, required?: string[], o: Schema = {}): Schema {
  return { type: 'object', properties, ...(required?.length ? { required } : {}), ...o };
}
const desc = (description: string, s: Schema): Schema => ({ description, ...s });

const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const group = () =>
  str({ maxLength: 253, pattern: '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' });
const kind = () => str({ minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' });
const objectName = () => str({ minLength: 1, maxLength: 253 });
const namespace = () => str({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' });
const sectionName = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
const port = () => int32({ minimum: 1, maximum: 65535 });
const hostname = () =>
  str({
    minLength: 1,
    maxLength: 253,
    pattern: '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  });
const preciseHostname = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
/** GEP-2257 durations, e.g. `10s`, `1m30s`, `500ms`. */
const duration = () => str({ pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$' });
const controllerName = () =>
  str({
    minLength: 1,
    maxLength: 253,
    pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$",
  });
const headerName = () => str({ minLength: 1, maxLength: 256, pattern: "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$" });

const condition = (): Schema =>
  obj(
    {
      lastTransitionTime: str({ format: 'date-time' }),
      message: str({ maxLength: 32768 }),
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: str({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
      status: str({ enum: ['True', 'False', 'Unknown'] }),
      type: str({
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      }),
    },
    ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
  );
const conditions = (o: Schema = {}): Schema =>
  arr(condition(), { maxItems: 8, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], ...o });

const labelSelector = (): Schema =>
  obj(
    {
      matchExpressions: arr(
        obj({ key: str(), operator: str(), values: arr(str(), { 'x-kubernetes-list-type': 'atomic' }) }, [
          'key',
          'operator',
        ]),
        { 'x-kubernetes-list-type': 'atomic' },
      ),
      matchLabels: strMap(),
    },
    undefined,
    { 'x-kubernetes-map-type': 'atomic' },
  );

const parentReference = (): Schema =>
  obj(
    {
      group: { ...group(), default: 'gateway.networking.k8s.io' },
      kind: { ...kind(), default: 'Gateway' },
      namespace: namespace(),
      name: objectName(),
      sectionName: sectionName(),
      port: port(),
    },
    ['name'],
  );

const backendObjectReference = (): Schema =>
  obj(
    {
      group: { ...group(), default: '' },
      kind: { ...kind(), default: 'Service' },
      name: objectName(),
      namespace: namespace(),
      port: port(),
    },
    ['name'],
  );

const httpHeader = (): Schema =>
  obj({ name: headerName(), value: str({ minLength: 1, maxLength: 4096 }) }, ['name', 'value']);
const headerFilter = (): Schema =>
  obj({
    set: arr(httpHeader(), { maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    add: arr(httpHeader(), { maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    remove: arr(str(), { maxItems: 16, 'x-kubernetes-list-type': 'set' }),
  });
const pathModifier = (): Schema =>
  obj(
    {
      type: str({ enum: ['ReplaceFullPath', 'ReplacePrefixMatch'] }),
      replaceFullPath: str({ maxLength: 1024 }),
      replacePrefixMatch: str({ maxLength: 1024 }),
    },
    ['type'],
  );

// ---- Gateway API -----------------------------------------------------------------------------------------------

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

// ---- the CRD wrapper ------------------------------------------------------------------------------------------

export interface CrdSpec {
  group: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope: 'Namespaced' | 'Cluster';
  version: string;
  spec: Schema;
  status: Schema;
  specRequired?: boolean;
  columns?: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
  annotations?: Record<string, string>;
  description: string;
}

/** Which upstream Gateway API release the shipped subset follows (its standard channel). */
export const GATEWAY_API_BUNDLE_VERSION = 'v1.3.0';

export function crd(s: CrdSpec): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${s.plural}.${s.group}`,
      ...(s.annotations ? { annotations: s.annotations } : {}),
      labels: { 'app.orch.io/part-of': 'gwvendor' },
    },
    spec: {
      group: s.group,
      names: {
        kind: s.kind,
        listKind: `${s.kind}List`,
        plural: s.plural,
        singular: s.singular ?? s.kind.toLowerCase(),
        ...(s.shortNames ? { shortNames: s.shortNames } : {}),
        ...(s.categories ? { categories: s.categories } : {}),
      },
      scope: s.scope,
      versions: [
        {
          name: s.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(s.columns ? { additionalPrinterColumns: s.columns } : {}),
          schema: {
            openAPIV3Schema: {
              description: s.description,
              type: 'object',
              properties: {
                apiVersion: str(),
                kind: str(),
                metadata: { type: 'object' },
                spec: s.spec,
                status: s.status,
              },
              ...(s.specRequired === false ? {} : { required: ['spec'] }),
            },
          },
        },
      ],
    },
  };
}

const GW_ANNOTATIONS = {
  'gateway.networking.k8s.io/bundle-version': GATEWAY_API_BUNDLE_VERSION,
  'gateway.networking.k8s.io/channel': 'standard',
  'gateway.gwvendor.dev/subset':
    'the Gateway API fields gwlab supports; the lab keeps a cluster’s own Gateway API CRDs when it has them',
};

export function gatewayApiCrds(): Record<string, unknown>[] {
  return [
    crd({
      group: 'gateway.networking.k8s.io',
      kind: 'GatewayClass',
      plural: 'gatewayclasses',
      shortNames: ['gc'],
      categories: ['gateway-api'],
      scope: 'Cluster',
      version: 'v1',
      annotations: GW_ANNOTATIONS,
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
      columns: [
        { name: 'Controller', type: 'string', jsonPath: '.spec.controllerName' },
        { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    }),
    crd({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      plural: 'gateways',
      shortNames: ['gtw'],
      categories: ['gateway-api'],
      scope: 'Namespaced',
      version: 'v1',
      annotations: GW_ANNOTATIONS,
      description:
        'Gateway represents an instance of a service-traffic handling infrastructure by binding Listeners to a set of IP addresses.',
      spec: gatewaySpec(),
      status: gatewayStatus(),
      columns: [
        { name: 'Class', type: 'string', jsonPath: '.spec.gatewayClassName' },
        { name: 'Address', type: 'string', jsonPath: '.status.addresses[*].value' },
        { name: 'Programmed', type: 'string', jsonPath: '.status.conditions[?(@.type=="Programmed")].status' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    }),
    crd({
      group: 'gateway.networking.k8s.io',
      kind: 'HTTPRoute',
      plural: 'httproutes',
      categories: ['gateway-api'],
      scope: 'Namespaced',
      version: 'v1',
      annotations: GW_ANNOTATIONS,
      description:
        'HTTPRoute provides a way to route HTTP requests by hostname, path, header or query param, to backends.',
      spec: httpRouteSpec(),
      status: routeStatus(),
      columns: [
        { name: 'Hostnames', type: 'string', jsonPath: '.spec.hostnames' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    }),
    crd({
      group: 'gateway.networking.k8s.io',
      kind: 'ReferenceGrant',
      plural: 'referencegrants',
      shortNames: ['refgrant'],
      categories: ['gateway-api'],
      scope: 'Namespaced',
      version: 'v1beta1',
      annotations: GW_ANNOTATIONS,
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
      columns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    }),
  ];
}

// ---- vendor CRDs (gateway.gwvendor.dev/v1alpha1) -----------------------------------------------------------------

export const VENDOR_GROUP = 'gateway.gwvendor.dev';
/** Log level names of the proxy (Envoy's, plus `warn`, which the proxy also accepts). */
export const PROXY_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'warning', 'error', 'critical', 'off'];

const policyAncestorStatus = (): Schema =>
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

export function vendorCrds(): Record<string, unknown>[] {
  const gatewayParameters = crd({
    group: VENDOR_GROUP,
    kind: 'GatewayParameters',
    plural: 'gatewayparameters',
    singular: 'gatewayparameters',
    shortNames: ['gwp'],
    categories: ['gwvendor'],
    scope: 'Namespaced',
    version: 'v1alpha1',
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
    }),
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    columns: [
      { name: 'LogLevel', type: 'string', jsonPath: '.spec.kube.envoyContainer.bootstrap.logLevel' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });

  const percentage = () => ({ type: 'number', minimum: 0, maximum: 100 });
  const trafficPolicy = crd({
    group: VENDOR_GROUP,
    kind: 'TrafficPolicy',
    plural: 'trafficpolicies',
    shortNames: ['tp'],
    categories: ['gwvendor'],
    scope: 'Namespaced',
    version: 'v1alpha1',
    description:
      'TrafficPolicy sets traffic behaviour on Gateways and HTTPRoutes it targets (targetRefs) or selects by label ' +
      '(targetSelectors, same namespace). Per top-level field, the more specific attachment wins (route rule > route > ' +
      'listener > gateway), then the older policy (creationTimestamp), then namespace/name.',
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
      rateLimit: obj({
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
      }),
      extAuth: obj({
        extensionRef: obj({ name: objectName() }, ['name']),
        disable: desc('Turns ext auth off for the targets (e.g. a route under a Gateway-wide ext auth).', bool()),
      }),
      urlRewrite: obj({
        hostname: preciseHostname(),
        pathRegex: obj({ pattern: str({ minLength: 1 }), substitution: str() }, ['pattern', 'substitution']),
      }),
      faultInjection: obj({
        delay: obj({ fixedDelay: duration(), percentage: percentage() }, ['fixedDelay']),
        abort: obj({ httpStatus: int32({ minimum: 200, maximum: 599 }), percentage: percentage() }, ['httpStatus']),
      }),
    }),
    status: policyAncestorStatus(),
    columns: [
      { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
      { name: 'Attached', type: 'string', jsonPath: '.status.conditions[?(@.type=="Attached")].reason' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });

  const gatewayExtension = crd({
    group: VENDOR_GROUP,
    kind: 'GatewayExtension',
    plural: 'gatewayextensions',
    shortNames: ['gwe'],
    categories: ['gwvendor'],
    scope: 'Namespaced',
    version: 'v1alpha1',
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
    columns: [
      { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
      { name: 'ResolvedRefs', type: 'string', jsonPath: '.status.conditions[?(@.type=="ResolvedRefs")].reason' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
  return [gatewayParameters, trafficPolicy, gatewayExtension];
}
