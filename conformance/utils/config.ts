// The conformance suite's timeout profile: upstream's config.DefaultTimeoutConfig() (Gateway API v1.6.1
// conformance/utils/config/timeout.go), same values, in milliseconds.
export interface TimeoutConfig {
  createTimeout: number;
  deleteTimeout: number;
  getTimeout: number;
  gatewayMustHaveAddress: number;
  gatewayMustHaveCondition: number;
  gatewayStatusMustHaveListeners: number;
  gatewayListenersMustHaveConditions: number;
  listenerSetMustHaveCondition: number;
  listenerSetListenersMustHaveConditions: number;
  gwcMustBeAccepted: number;
  httpRouteMustNotHaveParents: number;
  httpRouteMustHaveCondition: number;
  tlsRouteMustHaveCondition: number;
  tcpRouteMustHaveCondition: number;
  udpRouteMustHaveCondition: number;
  routeMustHaveParents: number;
  manifestFetchTimeout: number;
  maxTimeToConsistency: number;
  namespacesMustBeReady: number;
  requestTimeout: number;
  latestObservedGenerationSet: number;
  defaultTestTimeout: number;
  defaultPollInterval: number;
  requiredConsecutiveSuccesses: number;
}

const s = 1000;

export const DEFAULT_TIMEOUT_CONFIG: Readonly<TimeoutConfig> = Object.freeze({
  createTimeout: 60 * s,
  deleteTimeout: 10 * s,
  getTimeout: 10 * s,
  gatewayMustHaveAddress: 180 * s,
  gatewayMustHaveCondition: 180 * s,
  gatewayStatusMustHaveListeners: 60 * s,
  gatewayListenersMustHaveConditions: 60 * s,
  listenerSetMustHaveCondition: 180 * s,
  listenerSetListenersMustHaveConditions: 60 * s,
  gwcMustBeAccepted: 180 * s,
  httpRouteMustNotHaveParents: 60 * s,
  httpRouteMustHaveCondition: 60 * s,
  tlsRouteMustHaveCondition: 60 * s,
  tcpRouteMustHaveCondition: 60 * s,
  udpRouteMustHaveCondition: 60 * s,
  routeMustHaveParents: 60 * s,
  manifestFetchTimeout: 10 * s,
  maxTimeToConsistency: 30 * s,
  namespacesMustBeReady: 300 * s,
  requestTimeout: 10 * s,
  latestObservedGenerationSet: 60 * s,
  defaultTestTimeout: 60 * s,
  defaultPollInterval: 100,
  requiredConsecutiveSuccesses: 3,
});
