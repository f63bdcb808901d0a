// Gateway API v1.6.1 features and conformance profiles (pkg/features/*.go, conformance/utils/suite/profiles.go), and
// the one list of what gwlab declares as supported: a test runs only when every feature it names is in SUPPORTED;
// any other is skipped and reported as skipped, never passed. The list says what the control plane and proxy do today,
// verified by the ported tests of those features; add a feature here when its tests pass.

export const CORE = {
  Gateway: 'Gateway',
  HTTPRoute: 'HTTPRoute',
  ReferenceGrant: 'ReferenceGrant',
} as const;

/** GatewayExtendedFeatures (pkg/features/gateway.go). */
export const GATEWAY_EXTENDED = [
  'GatewayPort8080',
  'GatewayStaticAddresses',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayInfrastructurePropagation',
  'GatewayAddressEmpty',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'ListenerSet',
] as const;

/** HTTPRouteExtendedFeatures (pkg/features/httproute.go). */
export const HTTPROUTE_EXTENDED = [
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteMethodMatching',
  'HTTPRouteResponseHeaderModification',
  'HTTPRoutePortRedirect',
  'HTTPRouteSchemeRedirect',
  'HTTPRoutePathRedirect',
  'HTTPRouteHostRewrite',
  'HTTPRoutePathRewrite',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteBackendTimeout',
  'HTTPRouteParentRefPort',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteCORS',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteRetry',
  'HTTPRouteRetryBackendTimeout',
  'HTTPRouteRetryConnectionError',
] as const;

/** BackendTLSPolicy core and extended features (pkg/features/backendtlspolicy.go). */
export const BACKENDTLSPOLICY = ['BackendTLSPolicy', 'BackendTLSPolicySANValidation'] as const;

/** TCPRoute and UDPRoute (pkg/features/tcproute.go, udproute.go): each profile's route kind, also its extended set. */
export const TCPROUTE = ['TCPRoute'] as const;
export const UDPROUTE = ['UDPRoute'] as const;
/** TLSRoute's extended features (pkg/features/tlsroute.go TLSRouteExtendedFeatures). */
export const TLSROUTE_EXTENDED = ['TLSRouteModeTerminate', 'TLSRouteModeMixed'] as const;

/** GRPCRoute core and extended features (pkg/features/grpcroute.go). */
export const GRPCROUTE = ['GRPCRoute'] as const;
export const GRPCROUTE_EXTENDED = ['GRPCRouteNamedRouteRule'] as const;

export interface Profile {
  name: string;
  core: readonly string[];
  extended: readonly string[];
}

/** The profiles this port covers (upstream's profiles.go); the others join as their route kinds land. */
export const PROFILES: Record<string, Profile> = {
  'GATEWAY-HTTP': {
    name: 'GATEWAY-HTTP',
    core: [CORE.Gateway, CORE.ReferenceGrant, CORE.HTTPRoute],
    extended: [...GATEWAY_EXTENDED, ...HTTPROUTE_EXTENDED, ...BACKENDTLSPOLICY],
  },
  'GATEWAY-TCP': {
    name: 'GATEWAY-TCP',
    core: [CORE.Gateway, 'TCPRoute', CORE.ReferenceGrant],
    extended: [...GATEWAY_EXTENDED, ...TCPROUTE],
  },
  'GATEWAY-TLS': {
    name: 'GATEWAY-TLS',
    core: [CORE.Gateway, CORE.ReferenceGrant, 'TLSRoute'],
    extended: [...GATEWAY_EXTENDED, ...TLSROUTE_EXTENDED],
  },
  'GATEWAY-UDP': {
    name: 'GATEWAY-UDP',
    core: [CORE.Gateway, 'UDPRoute', CORE.ReferenceGrant],
    extended: [...GATEWAY_EXTENDED, ...UDPROUTE],
  },
  // As profiles.go has it: GatewayExtendedFeatures only, so GRPCRouteNamedRule (GRPCRouteNamedRouteRule) is in no profile.
  'GATEWAY-GRPC': {
    name: 'GATEWAY-GRPC',
    core: [CORE.Gateway, CORE.ReferenceGrant, 'GRPCRoute'],
    extended: [...GATEWAY_EXTENDED],
  },
};

/**
 * What gwlab supports. Core: Gateway, HTTPRoute, ReferenceGrant (HTTPS listeners' statuses only: TLS termination in
 * the proxy is the issue "HTTPS, TLS passthrough, HTTP/2…"). Extended: the HTTPRoute filters and matches the control
 * plane translates (system/controlplane/ir/routes.ts) whose ported tests pass, request mirrors (one or more) among them;
 * ListenerSet (GEP-1713), its upstream tests passing but ListenerSetAllowedRoutesSupportedKinds, which needs TLSRoute.
 * GRPCRoute (issue 12): its four GATEWAY-GRPC tests pass (GRPCRouteNamedRouteRule is in no upstream profile, so it
 * stays undeclared: features.test.ts).
 */
export const SUPPORTED: ReadonlySet<string> = new Set<string>([
  CORE.Gateway,
  CORE.HTTPRoute,
  CORE.ReferenceGrant,
  'GatewayPort8080',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteMethodMatching',
  'HTTPRouteResponseHeaderModification',
  'HTTPRoutePathRewrite',
  'HTTPRouteHostRewrite',
  'HTTPRoutePathRedirect',
  'HTTPRoutePortRedirect',
  'HTTPRouteSchemeRedirect',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteParentRefPort',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteRequestTimeout',
  'HTTPRouteBackendTimeout',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteDestinationPortMatching',
  'GatewayHTTPListenerIsolation',
  'GatewayInfrastructurePropagation',
  'GatewayStaticAddresses',
  'GatewayAddressEmpty',
  'HTTPRouteRetry',
  'HTTPRouteCORS',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteBackendProtocolH2C',
  'ListenerSet',
  'HTTPRouteBackendProtocolWebSocket',
  'TCPRoute',
  'UDPRoute',
  'TLSRoute',
  'TLSRouteModeTerminate',
  'GRPCRoute',
  'BackendTLSPolicy',
  'BackendTLSPolicySANValidation',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
]);

/** A test runs when gwlab supports all its features (upstream: SupportedFeatures.HasAll). */
export function isSupported(features: readonly string[], supported: ReadonlySet<string> = SUPPORTED): boolean {
  return features.every((f) => supported.has(f));
}

/** The profiles a test belongs to: those whose core and extended features hold all the test's (profiles.go). */
export function profilesOf(features: readonly string[], profiles = Object.values(PROFILES)): Profile[] {
  return profiles.filter((p) => features.every((f) => p.core.includes(f) || p.extended.includes(f)));
}

/** A test is extended in a profile when one of its features is not among the profile's core (reports.go). */
export function isExtended(p: Profile, features: readonly string[]): boolean {
  return features.some((f) => !p.core.includes(f));
}
