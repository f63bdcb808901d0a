// The BackendConfigPolicy fields the IR keeps as users write them (outlierDetection, circuitBreakers): plain settings
// types, declared once, with no Kubernetes types in them, so that model.ts's BackendConfigPolicySpec and ir/types.ts's
// BackendConfigIR both use them. Their CRD schema is system/manifests/crds/vendor/backend-config-policy.ts; their
// validation, ir/backend-config-policy.ts; their Envoy form, xds/translator/cluster-settings.ts.

/** Passive health checking of a cluster's hosts (Envoy's cluster.OutlierDetection); durations as written. */
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
