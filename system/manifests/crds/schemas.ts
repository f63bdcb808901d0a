// The vendor CRDs the project ships (gateway.gwvendor.dev): each kind has its own module (vendor/) built from
// schema-blocks.ts and crd.ts; this module lists them in the order gwvendor.yaml holds them. The YAML file next to this
// module is generated from it (`node system/manifests/crds/generate.ts`); crds.test.ts checks that they agree and that
// every schema is structural. The Gateway API CRDs are upstream's, vendored unchanged (../gateway-api/).

import { backendConfigPolicyCrd } from './vendor/backend-config-policy.ts';
import { gatewayExtensionCrd } from './vendor/gateway-extension.ts';
import { gatewayParametersCrd } from './vendor/gateway-parameters.ts';
import { listenerPolicyCrd } from './vendor/listener-policy.ts';
import { trafficPolicyCrd } from './vendor/traffic-policy.ts';

export type { Schema } from './schema-blocks.ts';

/** GatewayParameters, TrafficPolicy, GatewayExtension, ListenerPolicy and BackendConfigPolicy (gateway.gwvendor.dev/v1alpha1): gwvendor.yaml. */
export function vendorCrds(): Record<string, unknown>[] {
  return [
    gatewayParametersCrd(),
    trafficPolicyCrd(),
    gatewayExtensionCrd(),
    listenerPolicyCrd(),
    backendConfigPolicyCrd(),
  ];
}
