// The cluster resources the control plane reads, typed for the fields it uses. Objects arrive as plain JSON from
// informers (or YAML in tests and the translate tool); defaults the API server would apply are applied again where
// they are read, so a golden input without them means the same thing.
import type { KObject, ObjectMeta } from '../shared/kobject.ts';
import { type LabelSelector, matchesLabelSelector } from '../shared/selectors.ts';
import type {
  CircuitBreakerSettings,
  HealthCheckTiming,
  HttpHealthCheckRequest,
  OutlierDetectionSettings,
} from './model-backend-config-fields.ts';
import type { PolicyFieldsSpec } from './model-policy-fields.ts';

export const CONTROLLER_NAME = 'gateway.gwvendor.dev/gwvendor';
export const GATEWAY_CLASS = 'gwvendor';
export const VENDOR_GROUP = 'gateway.gwvendor.dev';
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
/** Prefix of each proxy's snapshot key (node.metadata.role) `<prefix>~<namespace>~<gateway>`. */
export const ROLE_PREFIX = 'gwvendor-kube-gateway-api';

export type { KObject, ObjectMeta } from '../shared/kobject.ts';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export type { LabelSelector } from '../shared/selectors.ts';

// ---- Gateway API ---------------------------------------------------------------------------------------------

export type GatewayClass = KObject<{ controllerName: string; parametersRef?: unknown }, { conditions?: Condition[] }>;

export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  allowedRoutes?: {
    namespaces?: { from?: 'All' | 'Same' | 'Selector'; selector?: LabelSelector };
    kinds?: { group?: string; kind: string }[];
  };
  tls?: {
    mode?: 'Terminate' | 'Passthrough';
    certificateRefs?: { group?: string; kind?: string; name: string; namespace?: string }[];
  };
}

export interface GatewaySpec {
  gatewayClassName: string;
  listeners: Listener[];
  /** Which ListenerSets may attach (v1.6.1: `from` None by default). */
  allowedListeners?: { namespaces?: { from?: 'All' | 'Same' | 'Selector' | 'None'; selector?: LabelSelector } };
  addresses?: { type?: string; value?: string }[];
  /**
   * Gateway-wide TLS settings (v1.6.1 standard): the client certificate presented to TLS backends; the validation of
   * the client certificates of HTTPS listeners (GEP-91: a default, overridden per port).
   */
  tls?: {
    backend?: { clientCertificateRef?: { group?: string; kind?: string; name: string; namespace?: string } };
    frontend?: {
      default?: { validation?: FrontendTlsValidation };
      perPort?: { port: number; tls?: { validation?: FrontendTlsValidation } }[];
    };
  };
  infrastructure?: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    parametersRef?: { group: string; kind: string; name: string };
  };
}

/** GEP-91's FrontendTLSValidation: the CAs client certificates must chain to, and what a missing/bad one gets. */
export interface FrontendTlsValidation {
  caCertificateRefs?: { group?: string; kind?: string; name: string; namespace?: string }[];
  mode?: 'AllowValidOnly' | 'AllowInsecureFallback';
}

export interface ListenerStatus {
  name: string;
  supportedKinds: { group?: string; kind: string }[];
  attachedRoutes: number;
  conditions: Condition[];
}

export interface GatewayStatus {
  addresses?: { type: string; value: string }[];
  conditions?: Condition[];
  listeners?: ListenerStatus[];
  attachedListenerSets?: number;
}

export type Gateway = KObject<GatewaySpec, GatewayStatus>;

export interface ParentRef {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export interface HeaderFilter {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}

export interface BackendObjectRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
}

export interface PathModifier {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

/** CORS as Gateway API's HTTPCORSFilter (GEP-1767) and the TrafficPolicy's `cors` both write it. */
export interface CorsSpec {
  allowOrigins?: string[];
  allowMethods?: string[];
  allowHeaders?: string[];
  exposeHeaders?: string[];
  maxAge?: number;
  allowCredentials?: boolean;
}

export interface HTTPRouteFilter {
  type: string;
  requestHeaderModifier?: HeaderFilter;
  responseHeaderModifier?: HeaderFilter;
  requestMirror?: {
    backendRef: BackendObjectRef;
    percent?: number;
    fraction?: { numerator: number; denominator?: number };
  };
  requestRedirect?: {
    scheme?: 'http' | 'https';
    hostname?: string;
    path?: PathModifier;
    port?: number;
    statusCode?: number;
  };
  urlRewrite?: { hostname?: string; path?: PathModifier };
  extensionRef?: { group: string; kind: string; name: string };
  cors?: CorsSpec;
}

export interface HTTPRouteMatch {
  path?: { type?: 'Exact' | 'PathPrefix' | 'RegularExpression'; value?: string };
  headers?: { type?: 'Exact' | 'RegularExpression'; name: string; value: string }[];
  queryParams?: { type?: 'Exact' | 'RegularExpression'; name: string; value: string }[];
  method?: string;
}

export interface HTTPBackendRef extends BackendObjectRef {
  weight?: number;
  filters?: HTTPRouteFilter[];
}

export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  timeouts?: { request?: string; backendRequest?: string };
  retry?: { codes?: number[]; attempts?: number; backoff?: string };
}

export interface RouteParentStatus {
  parentRef: ParentRef;
  controllerName: string;
  conditions: Condition[];
}

export type HTTPRoute = KObject<
  { parentRefs?: ParentRef[]; hostnames?: string[]; rules?: HTTPRouteRule[] },
  { parents?: RouteParentStatus[] }
>;

/** GRPCRoute (v1 in Gateway API v1.6.1, apis/v1/grpcroute_types.go). */
export interface GRPCRouteMatch {
  method?: { type?: 'Exact' | 'RegularExpression'; service?: string; method?: string };
  headers?: { type?: 'Exact' | 'RegularExpression'; name: string; value: string }[];
}

export interface GRPCRouteRule {
  name?: string;
  matches?: GRPCRouteMatch[];
  /** RequestHeaderModifier, ResponseHeaderModifier, RequestMirror, ExtensionRef (the HTTPRoute filter shapes). */
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
}

export type GRPCRoute = KObject<
  { parentRefs?: ParentRef[]; hostnames?: string[]; rules?: GRPCRouteRule[] },
  { parents?: RouteParentStatus[] }
>;

/**
 * TCPRoute, UDPRoute and TLSRoute (v1 in Gateway API v1.6.1): parentRefs and one rule of weighted backendRefs; a
 * TLSRoute also has hostnames (the SNI names it serves).
 */
export type L4Route = KObject<
  {
    parentRefs?: ParentRef[];
    hostnames?: string[];
    rules?: { name?: string; backendRefs?: (BackendObjectRef & { weight?: number })[] }[];
  },
  { parents?: RouteParentStatus[] }
>;
export type TCPRoute = L4Route;
export type UDPRoute = L4Route;
export type TLSRoute = L4Route;

/** ListenerSet (v1 in Gateway API v1.6.1, GEP-1713): listeners attached to a parent Gateway. */
export type ListenerSet = KObject<
  { parentRef: { group?: string; kind?: string; namespace?: string; name: string }; listeners?: Listener[] },
  { conditions?: Condition[]; listeners?: ListenerStatus[] }
>;

export type ReferenceGrant = KObject<{
  from: { group: string; kind: string; namespace: string }[];
  to: { group: string; kind: string; name?: string }[];
}>;

// ---- core ----------------------------------------------------------------------------------------------------

export type Namespace = KObject;

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
  appProtocol?: string;
}

export type Service = KObject<
  { type?: string; ports?: ServicePort[]; clusterIP?: string; selector?: Record<string, string> },
  { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] }; conditions?: Condition[] }
>;

export interface EndpointSlice {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  addressType?: string;
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
    targetRef?: { kind?: string; name?: string; namespace?: string };
  }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

export type Deployment = KObject<
  { replicas?: number },
  { replicas?: number; readyReplicas?: number; availableReplicas?: number; observedGeneration?: number }
>;

// ---- vendor ------------------------------------------------------------------------------------------------------

export interface GatewayParametersSpec {
  kube?: {
    deployment?: { replicas?: number };
    envoyContainer?: {
      bootstrap?: { logLevel?: string; componentLogLevels?: Record<string, string> };
      image?: { registry?: string; repository?: string; tag?: string; digest?: string; pullPolicy?: string };
      resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number> };
      extraArgs?: string[];
      env?: { name: string; value?: string; valueFrom?: unknown }[];
    };
    service?: { type?: string; extraLabels?: Record<string, string>; extraAnnotations?: Record<string, string> };
    podTemplate?: {
      extraLabels?: Record<string, string>;
      extraAnnotations?: Record<string, string>;
      nodeSelector?: Record<string, string>;
    };
  };
  /** A stdout access log in Envoy's default format on every listener no ListenerPolicy gives an access log. */
  defaultAccessLog?: { enabled?: boolean };
}

export type GatewayParameters = KObject<GatewayParametersSpec>;

export interface PolicyTargetRef {
  group: string;
  kind: string;
  name: string;
  sectionName?: string;
}

export interface TrafficPolicySpec extends PolicyFieldsSpec {
  targetRefs?: PolicyTargetRef[];
  targetSelectors?: { group: string; kind: string; matchLabels: Record<string, string> }[];
  /** How its fields merge onto those of lower-priority policies (ir/policy-merge.ts); absent: they replace them. */
  mergeType?: 'StrategicMerge' | 'JSONMerge';
  timeouts?: { request?: string; streamIdle?: string };
  retry?: {
    attempts: number;
    perTryTimeout?: string;
    retryOn?: string[];
    statusCodes?: number[];
    backoffBaseInterval?: string;
  };
  cors?: CorsSpec;
  headerModifiers?: { request?: HeaderFilter; response?: HeaderFilter };
  rateLimit?: {
    local?: {
      tokenBucket: { maxTokens: number; tokensPerFill?: number; fillInterval: string };
      percentEnabled?: number;
      percentEnforced?: number;
    };
    /** A global rate limit: a rate-limit service (GatewayExtension `rateLimit`) counts the descriptors. */
    global?: { extensionRef: { name: string }; descriptors: RateLimitDescriptorSpec[] };
  };
  extAuth?: { extensionRef?: { name: string }; disable?: boolean };
  /** An external processor (GatewayExtension `extProc`) sees, and may change or answer, each request's headers. */
  extProc?: { extensionRef?: { name: string }; disable?: boolean };
  urlRewrite?: { hostname?: string; pathRegex?: { pattern: string; substitution: string } };
  faultInjection?: {
    delay?: { fixedDelay: string; percentage?: number };
    abort?: { httpStatus: number; percentage?: number };
  };
}

export interface PolicyAncestorStatus {
  ancestorRef: ParentRef;
  controllerName: string;
  conditions: Condition[];
}

export type TrafficPolicy = KObject<
  TrafficPolicySpec,
  { ancestors?: PolicyAncestorStatus[]; conditions?: Condition[] }
>;

/** The top-level fields of a TrafficPolicy that merge independently (the unit of precedence). */
export const POLICY_FIELDS = [
  'timeouts',
  'retry',
  'cors',
  'headerModifiers',
  'rateLimit',
  'extAuth',
  'urlRewrite',
  'faultInjection',
  'extProc',
  'rbac',
  'jwt',
  'buffer',
  'compression',
  'transformation',
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

/** One descriptor sent to the rate-limit service: its entries, each one of the three kinds (Envoy's rate limit actions). */
export interface RateLimitDescriptorSpec {
  entries: {
    remoteAddress?: Record<string, never>;
    header?: { name: string; key: string };
    genericKey?: { value: string; key?: string };
  }[];
}

/** A Service port a GatewayExtension's proxy calls go to. */
export interface ExtensionServiceRef {
  name: string;
  namespace?: string;
  port: number;
}

/** A gRPC service of a GatewayExtension (Envoy's GrpcService.envoy_grpc). */
export interface ExtensionGrpcService {
  backendRef: ExtensionServiceRef;
  authority?: string;
  timeout?: string;
}

export type GatewayExtension = KObject<
  {
    extAuth?: {
      httpService?: {
        backendRef: ExtensionServiceRef;
        pathPrefix?: string;
        timeout?: string;
        allowedHeaders?: string[];
      };
      grpcService?: ExtensionGrpcService;
      failOpen?: boolean;
      statusOnError?: number;
    };
    /** A rate-limit service (envoy.service.ratelimit.v3.RateLimitService) for TrafficPolicy rateLimit.global. */
    rateLimit?: { grpcService: ExtensionGrpcService; domain: string; timeout?: string; failOpen?: boolean };
    /** An external processor (envoy.service.ext_proc.v3.ExternalProcessor) for TrafficPolicy extProc. */
    extProc?: {
      grpcService: ExtensionGrpcService;
      processingMode?: { requestHeaders?: 'Send' | 'Skip' };
      messageTimeout?: string;
      failOpen?: boolean;
    };
  },
  { conditions?: Condition[] }
>;

/**
 * The GatewayExtensions a TrafficPolicy names (same namespace), with the field and the path that names each:
 * extAuth.extensionRef, rateLimit.global.extensionRef, extProc.extensionRef (the lab's tools read them: explain,
 * translate).
 */
export function policyExtensionRefs(
  spec: TrafficPolicySpec | undefined,
): { field: PolicyField; path: string; name: string }[] {
  const out: { field: PolicyField; path: string; name: string }[] = [];
  const add = (field: PolicyField, path: string, name: string | undefined) => {
    if (name) out.push({ field, path, name });
  };
  add('extAuth', 'spec.extAuth.extensionRef', spec?.extAuth?.extensionRef?.name);
  add('rateLimit', 'spec.rateLimit.global.extensionRef', spec?.rateLimit?.global?.extensionRef?.name);
  add('extProc', 'spec.extProc.extensionRef', spec?.extProc?.extensionRef?.name);
  return out;
}

/**
 * The Services a GatewayExtension's proxy calls go to, with the field naming each (the one list the control plane's
 * statuses and the lab's tools read: explain, lab:status).
 */
export function extensionBackendRefs(spec: GatewayExtension['spec']): { field: string; ref: ExtensionServiceRef }[] {
  const out: { field: string; ref: ExtensionServiceRef }[] = [];
  const add = (field: string, ref: ExtensionServiceRef | undefined) => {
    if (ref) out.push({ field, ref });
  };
  add('spec.extAuth.httpService.backendRef', spec?.extAuth?.httpService?.backendRef);
  add('spec.extAuth.grpcService.backendRef', spec?.extAuth?.grpcService?.backendRef);
  add('spec.rateLimit.grpcService.backendRef', spec?.rateLimit?.grpcService?.backendRef);
  add('spec.extProc.grpcService.backendRef', spec?.extProc?.grpcService?.backendRef);
  return out;
}

// ---- keys ---------------------------------------------------------------------------------------------------

export function keyOf(o: { metadata: ObjectMeta }): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

export function nsName(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function roleOf(namespace: string, gateway: string): string {
  return `${ROLE_PREFIX}~${namespace}~${gateway}`;
}

/** A label selector of the Gateway API (allowedRoutes namespaces, policy targetSelectors); an absent one selects all. */
export function matchesLabels(labels: Record<string, string> | undefined, sel: LabelSelector | undefined): boolean {
  return !sel || matchesLabelSelector(labels, sel);
}

/** Orders objects oldest first, then by namespace/name (the Gateway API's and the policies' tie-breaks). */
export function olderFirst(a: { metadata: ObjectMeta }, b: { metadata: ObjectMeta }): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = keyOf(a);
  const kb = keyOf(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** A Secret as the control plane reads it (HTTPS listeners' certificateRefs). */
export interface Secret extends KObject {
  type?: string;
  /** base64 values */
  data?: Record<string, string>;
}

/** A ConfigMap as the control plane reads it: BackendTLSPolicies' caCertificateRefs (key `ca.crt`). */
export interface ConfigMap extends KObject {
  data?: Record<string, string>;
}

/** BackendTLSPolicy (v1 in Gateway API v1.6.1, GEP-1897): TLS from the Gateway to a Service's endpoints. */
export interface BackendTLSPolicySpec {
  targetRefs?: { group?: string; kind: string; name: string; sectionName?: string }[];
  validation?: {
    caCertificateRefs?: { group?: string; kind: string; name: string }[];
    wellKnownCACertificates?: string;
    hostname: string;
    subjectAltNames?: { type: 'Hostname' | 'URI'; hostname?: string; uri?: string }[];
  };
  options?: Record<string, string>;
}

export type BackendTLSPolicy = KObject<BackendTLSPolicySpec, { ancestors?: PolicyAncestorStatus[] }>;

/** A BackendConfigPolicy's hash policy: the request value RING_HASH / MAGLEV hash on (Envoy's RouteAction.HashPolicy). */
export interface HashPolicySpec {
  header?: { name: string };
  sourceIP?: Record<string, never>;
  queryParameter?: { name: string };
  terminal?: boolean;
}

/**
 * BackendConfigPolicy (gateway.gwvendor.dev/v1alpha1, shaped after kgateway's): cluster settings for the Services (or
 * one port of them, sectionName) it targets; ir/backend-config-policy.ts.
 */
export interface BackendConfigPolicySpec {
  targetRefs?: PolicyTargetRef[];
  connectTimeout?: string;
  perConnectionBufferLimitBytes?: number;
  http1ProtocolOptions?: {
    enableTrailers?: boolean;
    headerFormat?: 'ProperCaseHeaderKeyFormat' | 'PreserveCaseHeaderKeyFormat';
    overrideStreamErrorOnInvalidHttpMessage?: boolean;
  };
  http2ProtocolOptions?: {
    initialStreamWindowSize?: number;
    initialConnectionWindowSize?: number;
    maxConcurrentStreams?: number;
    overrideStreamErrorOnInvalidHttpMessage?: boolean;
  };
  loadBalancer?: {
    healthyPanicThreshold?: number;
    roundRobin?: Record<string, never>;
    leastRequest?: { choiceCount?: number };
    random?: Record<string, never>;
    ringHash?: { minimumRingSize?: number; maximumRingSize?: number; hashPolicies?: HashPolicySpec[] };
    maglev?: { hashPolicies?: HashPolicySpec[] };
  };
  healthCheck?: HealthCheckTiming & { http?: HttpHealthCheckRequest };
  outlierDetection?: OutlierDetectionSettings;
  circuitBreakers?: CircuitBreakerSettings;
}

export type BackendConfigPolicy = KObject<
  BackendConfigPolicySpec,
  { ancestors?: PolicyAncestorStatus[]; conditions?: Condition[] }
>;

/** One access log of a ListenerPolicy: a file (or /dev/stdout) in a text or JSON format, and which requests it keeps. */
export interface AccessLogSpec {
  fileSink?: { path: string; stringFormat?: string; jsonFormat?: Record<string, unknown> };
  filter?: { statusCode?: { op: 'EQ' | 'GE' | 'LE'; value: number }; responseFlags?: string[] };
}

/** ListenerPolicy (gateway.gwvendor.dev/v1alpha1): a Gateway's (or one listener's) HTTP connection manager settings. */
export interface ListenerPolicySpec {
  targetRefs?: PolicyTargetRef[];
  accessLog?: AccessLogSpec[];
  idleTimeout?: string;
  xffNumTrustedHops?: number;
  useRemoteAddress?: boolean;
  maxRequestHeadersKb?: number;
  serverHeaderTransformation?: 'Overwrite' | 'AppendIfAbsent' | 'PassThrough';
  preserveHttp1HeaderCase?: boolean;
}

export type ListenerPolicy = KObject<
  ListenerPolicySpec,
  { ancestors?: PolicyAncestorStatus[]; conditions?: Condition[] }
>;
