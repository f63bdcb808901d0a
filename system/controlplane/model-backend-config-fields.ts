// The BackendConfigPolicy settings the IR keeps in the shape users write them (the active health check's request and
// timing, outlierDetection, circuitBreakers): plain settings types, declared once, with no Kubernetes types in them,
// so that model.ts's BackendConfigPolicySpec and ir/types.ts's BackendConfigIR both use them. A duration is a string
// in both: GEP-2257 text as written in the spec, the proto3 Duration form in the IR (ir/backend-config-policy.ts
// converts it). Their CRD schema is system/manifests/crds/vendor/backend-config-policy.ts; their
// validation, ir/backend-config-policy.ts; their Envoy form, xds/translator/cluster-settings.ts.

/** The request an active HTTP health check sends (Envoy's HealthCheck.HttpHealthCheck). */
export interface HttpHealthCheckRequest {
  path: string;
  host?: string;
  method?: string;
  expectedStatuses?: number[];
}

/** How often an active health check runs and how many answers change a host's health (Envoy's HealthCheck). */
export interface HealthCheckTiming {
  interval: string;
  timeout: string;
  unhealthyThreshold: number;
  healthyThreshold: number;
}

/** Passive health checking of a cluster's hosts (Envoy's cluster.OutlierDetection). */
export interface OutlierDetectionSettings {
  consecutive5xx?: number;
  interval?: string;
  baseEjectionTime?: string;
  maxEjectionPercent?: number;
}

/** A cluster's connection and request limits (Envoy's cluster.CircuitBreakers, the DEFAULT priority's thresholds). */
export interface CircuitBreakerSettings {
  maxConnections?: number;
  maxPendingRequests?: number;
  maxRequests?: number;
  maxRetries?: number;
  trackRemaining?: boolean;
}
