// The intermediate representation: what one Gateway's proxy must do, resolved and ordered, with no Kubernetes objects
// left in it and no Envoy types yet. Reports (the inputs of status) travel beside it. Also the two constructors of an
// Outcome and the string order the IR sorts by.

import type { PolicyField } from '../model.ts';
import type {
  CircuitBreakerSettings,
  HealthCheckTiming,
  HttpHealthCheckRequest,
  OutlierDetectionSettings,
} from '../model-backend-config-fields.ts';
import type { MergeType } from './policy-merge.ts';

export type ValidationMode = 'strict' | 'off';

export interface ObjRef {
  kind: string;
  namespace: string;
  name: string;
}

/** A validation problem found at translation: dropped in strict mode, sent as written in off mode. */
export interface Finding {
  resource: ObjRef;
  field: string;
  message: string;
}

export interface Outcome {
  ok: boolean;
  reason: string;
  message: string;
}

export const ok = (reason: string, message: string): Outcome => ({ ok: true, reason, message });
export const bad = (reason: string, message: string): Outcome => ({ ok: false, reason, message });

/** Code-point order of two strings (sorting by name, as the Gateway API's tie-breaks and stable output want). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface StringMatchIR {
  type: 'Exact' | 'RegularExpression';
  name: string;
  value: string;
}

export interface MatchIR {
  path: { type: 'Exact' | 'PathPrefix' | 'RegularExpression'; value: string };
  headers: StringMatchIR[];
  queryParams: StringMatchIR[];
  method?: string;
  /**
   * A GRPCRoute match's method match as written (`path` is what it comes to: `/<service>/<method>`); absent: an
   * HTTPRoute match, or a GRPCRoute match of every method. Precedence among GRPCRoute rules counts its characters.
   */
  grpc?: { type: 'Exact' | 'RegularExpression'; service?: string; method?: string };
}

export interface HeaderOpsIR {
  set: { name: string; value: string }[];
  add: { name: string; value: string }[];
  remove: string[];
}

export interface WeightedClusterIR {
  /** `kube_<ns>_<svc>_<port>`, or `blackhole-cluster` for a backend that did not resolve. */
  cluster: string;
  weight: number;
  /** The backendRef's own header filters (Gateway API HTTPBackendRef.filters): only requests sent to it. */
  requestHeaders?: HeaderOpsIR;
  responseHeaders?: HeaderOpsIR;
}

export type ActionIR =
  | { type: 'forward'; backends: WeightedClusterIR[] }
  | {
      type: 'redirect';
      scheme?: string;
      hostname?: string;
      port?: number;
      statusCode: number;
      path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string };
    }
  | { type: 'direct'; status: number; reason: string };

export interface MirrorIR {
  cluster: string;
  /** Parts per million of requests mirrored (undefined: all). */
  perMillion?: number;
}

/** The parts of one HTTPRoute rule-match that do not depend on the Gateway. */
export interface RouteEntryIR {
  /** Stable and unique per Gateway: `httproute/<ns>/<name>/rule/<i>/match/<j>`. */
  name: string;
  route: ObjRef;
  rule: number;
  ruleName?: string;
  match: number;
  matchIR: MatchIR;
  action: ActionIR;
  requestHeaders?: HeaderOpsIR;
  responseHeaders?: HeaderOpsIR;
  rewrite?: { hostname?: string; path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } };
  mirrors: MirrorIR[];
  timeouts?: { request?: string; backendRequest?: string };
  /** The rule's `retry` (GEP-1731) and CORS filter (GEP-1767), read as a TrafficPolicy's are (http-settings.ts). */
  retry?: PolicySettings['retry'];
  cors?: PolicySettings['cors'];
  /** A GRPCRoute's entry: an unresolved backend answers 503 (gRPC UNAVAILABLE), as GRPCRouteRule.backendRefs asks. */
  grpc?: true;
}

export interface ExtAuthIR {
  /** The HTTP filter's name: `envoy.filters.http.ext_authz/<ns>/<name>` of the GatewayExtension. */
  filterName: string;
  extension: ObjRef;
  /** The auth service's cluster (`kube_<ns>_<svc>_<port>`, EDS like any backend; HTTP/2 for a gRPC service). */
  cluster: ClusterIR;
  /** The HTTP service's URI; absent for a gRPC service. */
  uri?: string;
  /** A gRPC service (Authorization/Check): the calls' :authority when set. */
  grpc?: { authority?: string };
  pathPrefix?: string;
  timeout: string;
  allowedHeaders: string[];
  failOpen: boolean;
  statusOnError: number;
}

/** A GatewayExtension's rate-limit service (Envoy's envoy.filters.http.ratelimit, one filter per extension). */
export interface RateLimitExtIR {
  /** `envoy.filters.http.ratelimit/<ns>/<name>` of the GatewayExtension. */
  filterName: string;
  extension: ObjRef;
  /** The service's cluster (HTTP/2). */
  cluster: ClusterIR;
  authority?: string;
  domain: string;
  timeout: string;
  failOpen: boolean;
}

/** A GatewayExtension's external processor (Envoy's envoy.filters.http.ext_proc, one filter per extension). */
export interface ExtProcIR {
  /** `envoy.filters.http.ext_proc/<ns>/<name>` of the GatewayExtension. */
  filterName: string;
  extension: ObjRef;
  /** The processor's cluster (HTTP/2). */
  cluster: ClusterIR;
  authority?: string;
  requestHeaders: boolean;
  messageTimeout: string;
  failOpen: boolean;
}

/** One entry of a rate limit descriptor: Envoy's rate limit action that makes it. */
export type RateLimitEntryIR =
  | { kind: 'remoteAddress' }
  | { kind: 'header'; name: string; key: string }
  | { kind: 'genericKey'; value: string; key?: string };

/** Settings a TrafficPolicy field applies, normalized (durations in proto form). */
export interface PolicySettings {
  timeouts?: { request?: string; streamIdle?: string };
  retry?: {
    attempts: number;
    perTryTimeout?: string;
    retryOn: string[];
    statusCodes: number[];
    backoffBaseInterval?: string;
  };
  cors?: {
    allowOrigins: { exact?: string; regex?: string }[];
    allowMethods: string[];
    allowHeaders: string[];
    exposeHeaders: string[];
    maxAge?: number;
    allowCredentials?: boolean;
  };
  headerModifiers?: { request?: HeaderOpsIR; response?: HeaderOpsIR };
  rateLimit?: {
    local?: {
      maxTokens: number;
      tokensPerFill: number;
      fillInterval: string;
      /** Percent of requests counted, and of those over the limit refused; absent: 100. */
      percentEnabled?: number;
      percentEnforced?: number;
    };
    global?: { ext: RateLimitExtIR; descriptors: RateLimitEntryIR[][] };
  };
  extAuth?: { disabled: true } | { disabled: false; ext: ExtAuthIR };
  extProc?: { disabled: true } | { disabled: false; ext: ExtProcIR };
  urlRewrite?: { hostname?: string; pathRegex?: { pattern: string; substitution: string } };
  faultInjection?: {
    delay?: { fixedDelay: string; perMillion: number };
    abort?: { httpStatus: number; perMillion: number };
  };
  rbac?: RbacIR;
  jwt?: JwtIR;
  buffer?: { maxRequestBytes: number };
  /** gzip responses; contentTypes empty: Envoy's default list. */
  compression?: { minContentLength: number; contentTypes: string[] };
  /** Header templates (values are formatter strings). */
  transformation?: { request?: HeaderOpsIR; response?: HeaderOpsIR };
}

// ---- TrafficPolicy fields of issue 13 item 4 (ir/policy-<field>.ts reads them, xds/translator/<filter>.ts writes) --

/** A request header match: exactly one of the kinds is set. */
export interface HeaderMatchIR {
  name: string;
  exact?: string;
  prefix?: string;
  regex?: string;
  present?: true;
}

export interface CidrIR {
  addressPrefix: string;
  prefixLen: number;
}

export type RbacPrincipalIR =
  | { any: true }
  | { directRemoteIp: CidrIR }
  | { remoteIp: CidrIR }
  | { header: HeaderMatchIR };
export type RbacPermissionIR = { any: true } | { header: HeaderMatchIR };

/** Envoy's RBAC rules: ALLOW lets through what a policy matches, DENY refuses it. */
export interface RbacIR {
  action: 'ALLOW' | 'DENY';
  policies: { name: string; principals: RbacPrincipalIR[]; permissions: RbacPermissionIR[] }[];
}

/**
 * Why a policy's value of a field is not the setting as it wrote it: a more specific attachment, an older policy, or
 * the name tie-break put another one above it; `merged`: the one above it has a mergeType and its value was merged
 * onto this one's (sub-fields it sets and the one above does not survive).
 */
export type PrecedenceRule = 'more specific' | 'older' | 'name' | 'merged';

export interface FieldDecision {
  field: PolicyField;
  /** `TrafficPolicy/<ns>/<name>`: the highest-priority policy that sets it (its values win where merged ones meet). */
  winner: string;
  level: 'gateway' | 'listener' | 'route' | 'rule';
  /**
   * The other policies that set the field, in precedence order: first those merged under the winner (rule `merged`,
   * with the mergeType of the policy just above), then those left out, each with the rule that put the last policy
   * of the merge (the winner when nothing merged; else named as `to`) above it.
   */
  over: { policy: string; level: FieldDecision['level']; rule: PrecedenceRule; mergeType?: MergeType; to?: string }[];
  /** A merge asked for but not made because its result is invalid (the winner's value applies alone): why. */
  mergeRefused?: string;
}

/** One route of a virtual host: the rule-match, plus the policy settings that won for it and where they came from. */
export interface RouteIR extends RouteEntryIR {
  policy: PolicySettings;
  /** field → `TrafficPolicy/<ns>/<name>` that supplied it; a merge (mergeType) names each policy merged, `A+B`. */
  provenance: Partial<Record<PolicyField, string>>;
  /** The fields more than one policy sets: attach-policies.ts's decision (winner, the others, the rule). */
  precedence?: FieldDecision[];
}

export interface VirtualHostIR {
  /** `listener~<port>~<hostname with . as _>` */
  name: string;
  domains: string[];
  routes: RouteIR[];
}

export interface ListenerIR {
  /** `listener~<port>`; its RouteConfiguration has the same name. */
  name: string;
  port: number;
  /** The Gateway listeners (by name) merged into this port. */
  gatewayListeners: string[];
  virtualHosts: VirtualHostIR[];
  /**
   * HTTPS (TLS Terminate): a filter chain per Gateway listener on the port, picked by SNI among its server names (the
   * listener's hostname; none: the default chain), each terminating TLS with its certificates. Absent: plaintext HTTP.
   */
  tls?: TlsChainIR[];
  /** The connection manager's settings from a ListenerPolicy or the GatewayParameters' default access log. */
  hcm?: HcmSettingsIR;
}

/** One access log of a listener: a file or /dev/stdout, its format (none: Envoy's default) and filter. */
export interface AccessLogIR {
  path: string;
  text?: string;
  json?: Record<string, unknown>;
  statusCode?: { op: 'EQ' | 'GE' | 'LE'; value: number };
  responseFlags?: string[];
}

/** A listener's connection manager settings (ir/listener-policy.ts), each naming where it came from. */
export interface HcmSettingsIR {
  accessLog?: AccessLogIR[];
  /** Proto duration. */
  idleTimeout?: string;
  xffNumTrustedHops?: number;
  useRemoteAddress?: boolean;
  maxRequestHeadersKb?: number;
  serverHeaderTransformation?: 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';
  preserveHttp1HeaderCase?: boolean;
  /** setting → `ListenerPolicy/<ns>/<name>` or `GatewayParameters/<ns>/<name>` (provenance in config_dump). */
  provenance: Record<string, string>;
}

/** One HTTPS Gateway listener's filter chain. */
export interface TlsChainIR {
  /** The Gateway listener (its id). */
  listener: string;
  /** SNI names it matches: the listener's hostname; empty: every name no other chain matches, and no SNI. */
  serverNames: string[];
  certificates: CertificateIR[];
  /**
   * GEP-91 client certificate validation (the Gateway's spec.tls.frontend for the listener's port): the PEM of the
   * CA certificates a client certificate must chain to; AllowValidOnly requires one, AllowInsecureFallback asks for
   * one and accepts any (or none). Envoy: require_client_certificate, validation_context.trusted_ca and
   * trust_chain_verification (xds/translator/tls.ts).
   */
  clientValidation?: { trustedCa: string; mode: 'AllowValidOnly' | 'AllowInsecureFallback' };
  /**
   * HTTPS (absent on TLS chains before tcp_proxy). Misdirected requests (Gateway API
   * HTTPRouteHTTPSListenerDetectMisdirectedRequests): the chain's own route
   * configuration, named `routeConfig`, holding the port's virtual hosts its listener owns (`virtualHosts`, by name)
   * and a virtual host answering 421 for the `misdirected` domains: the other listeners' hostnames on the port, and
   * `*` when this listener has a hostname (a request whose Host another listener, or none, serves).
   */
  routeConfig?: string;
  virtualHosts?: string[];
  misdirected?: string[];
}

/** A certificate and its key from a Secret (tls.crt, tls.key), base64 PEM as in the Secret's data. */
export interface CertificateIR {
  /** `<namespace>/<name>` of the Secret. */
  secret: string;
  certificateChain: string;
  /** Never shown: /snapshots/krt and the golden ir.json show `[redacted]` (redactPrivateKeys). */
  privateKey: string;
}

/**
 * A TCP, UDP or TLS listener (TCPRoute, UDPRoute, TLSRoute): every connection or datagram session to one route's
 * backends; TLS: to the backends of the chain its SNI picks.
 */
export interface L4ListenerIR {
  /** `listener~<port>` (TCP and TLS; they share the port space with HTTP), `listener~udp~<port>` (UDP). */
  name: string;
  protocol: 'TCP' | 'UDP' | 'TLS';
  port: number;
  /** The listeners (ids: the Gateway's by name, a ListenerSet's as `<ns>/<set>/<name>`) on this port. */
  gatewayListeners: string[];
  /** The route served: the oldest of those attached (the Gateway API's conflict rule); absent: none attached. */
  route?: ObjRef;
  /** Weighted clusters; empty: every connection is refused (no route, or no backend resolved). TLS: unused. */
  backends: WeightedClusterIR[];
  /** TLS: one filter chain per (TLSRoute, Gateway listener), matched by SNI; none: every connection is closed. */
  chains?: L4ChainIR[];
}

/** One TLSRoute on one TLS Gateway listener: the SNI names it serves there and where they go. */
export interface L4ChainIR {
  /** `<listener id>/<route ns>/<route name>`: the filter chain's name. */
  name: string;
  /** The Gateway listener (its id). */
  listener: string;
  route: ObjRef;
  /** SNI names (the route's hostnames ∩ the listener's); empty: every name no other chain matches, and no SNI. */
  serverNames: string[];
  /** Weighted clusters; empty: the connection is closed (no backend resolved). */
  backends: WeightedClusterIR[];
  /** tls.mode Terminate: the listener's certificates (TLS is terminated, plaintext to the backend). */
  certificates?: CertificateIR[];
}

/** One ready endpoint of a Service port: the address and the target port. */
export interface EndpointAddress {
  address: string;
  port: number;
  /** load_balancing_weight (endpoints of a weighted UDP cluster); absent: 1. */
  weight?: number;
}

export interface ClusterIR {
  name: string;
  namespace: string;
  service: string;
  port: number;
  /**
   * A cluster of several weighted Services (a UDPRoute's backendRefs: Envoy's udp_proxy routes to one cluster): its
   * endpoints are theirs, each weighted so that every Service gets its share whatever its number of endpoints.
   */
  members?: { namespace: string; service: string; port: number; weight: number }[];
  /**
   * What the proxy speaks to the endpoints (backend-protocol.ts, from the Service port's appProtocol; `http2` for
   * every GRPCRoute backend, grpc-routes.ts); absent: HTTP/1.1.
   */
  protocol?: 'http2' | 'websocket';
  /** TLS to the endpoints, from the BackendTLSPolicy that applies to this Service port (ir/backend-tls.ts). */
  tls?: UpstreamTlsIR;
  /** Cluster settings from the BackendConfigPolicy that applies to this Service port (ir/backend-config-policy.ts). */
  backendConfig?: BackendConfigIR;
}

/** A hash policy of a consistent-hash cluster: what routes to it hash on (Envoy's RouteAction.HashPolicy). */
export type HashPolicyIR =
  | { header: string; terminal?: boolean }
  | { sourceIP: true; terminal?: boolean }
  | { queryParameter: string; terminal?: boolean };

/** What a BackendConfigPolicy sets on a cluster, validated; durations in proto form (xds/translator/cluster-settings.ts). */
export interface BackendConfigIR {
  /** `BackendConfigPolicy/<ns>/<name>`: the provenance every setting carries. */
  policy: string;
  connectTimeout?: string;
  perConnectionBufferLimitBytes?: number;
  http1?: { enableTrailers?: boolean; overrideStreamErrorOnInvalidHttpMessage?: boolean };
  http2?: { initialStreamWindowSize?: number; initialConnectionWindowSize?: number; maxConcurrentStreams?: number };
  loadBalancer?: {
    policy?: 'ROUND_ROBIN' | 'LEAST_REQUEST' | 'RANDOM' | 'RING_HASH' | 'MAGLEV';
    choiceCount?: number;
    minimumRingSize?: number;
    maximumRingSize?: number;
    hashPolicies?: HashPolicyIR[];
    healthyPanicThreshold?: number;
  };
  healthCheck?: HttpHealthCheckRequest & HealthCheckTiming;
  outlierDetection?: OutlierDetectionSettings;
  circuitBreakers?: CircuitBreakerSettings;
}

/** What a BackendTLSPolicy makes a cluster speak: Envoy's UpstreamTlsContext (xds/translator/cluster.ts). */
export interface UpstreamTlsIR {
  /** `<ns>/<name>` of the BackendTLSPolicy. */
  policy: string;
  /** The SNI, and the name the certificate must match when `sans` is empty. */
  sni: string;
  /** PEM of the trusted CA certificates (caCertificateRefs). */
  trustedCa?: string;
  /** wellKnownCACertificates: System. */
  systemCa?: boolean;
  /** subjectAltNames: the certificate must carry one of these (then `sni` is not matched). */
  sans: { type: 'DNS' | 'URI'; value: string }[];
  /** The policy is not accepted (why): the cluster gets no endpoints, so its requests fail with a 5xx. */
  invalid?: string;
  /** The Gateway's spec.tls.backend.clientCertificateRef, presented to the backend. */
  clientCertificate?: CertificateIR;
}

export interface GatewayIR {
  gateway: ObjRef;
  /** node.metadata.role of its proxies: the snapshot key. */
  role: string;
  validation: ValidationMode;
  listeners: ListenerIR[];
  /** TCP and UDP listeners, by port (absent when the Gateway has none). */
  l4Listeners?: L4ListenerIR[];
  clusters: ClusterIR[];
  extAuth: ExtAuthIR[];
  /** Problems found (strict: dropped from the config; off: sent as written). */
  findings: Finding[];
}

/** One JWT provider (Envoy's JwtProvider): its name is unique on a Gateway, `<ns>/<policy>/<provider>`. */
export interface JwtProviderIR {
  name: string;
  issuer?: string;
  audiences: string[];
  /** The JWKS inline (a JSON document, checked), or fetched from a Service (remote_jwks). */
  jwks: { inline: string } | { remote: { uri: string; cluster: ClusterIR; timeout: string; cacheDuration?: string } };
  claimToHeaders: { claim: string; header: string }[];
  forward: boolean;
}

/** A policy's JWT requirement (`<ns>/<policy>`): a token one of its providers verifies. */
export interface JwtIR {
  requirement: string;
  providers: JwtProviderIR[];
}
