// The CRDs the project ships: the Gateway API kinds and fields gwlab supports (at their upstream groups and versions,
// with the upstream constraints of those fields) and the vendor kinds of gateway.gwvendor.dev. The YAML files next to
// this module are generated from it (`node system/manifests/crds/generate.ts`); crds.test.ts checks that they agree,
// that every schema is structural, and that each Gateway API field matches @kubernetes-models/gateway-api.
// Each kind has its own module (gateway-api/, vendor/) built from schema-blocks.ts and crd.ts; this module lists them
// in the order the YAML files hold them.

import { gatewayCrd } from './gateway-api/gateway.ts';
import { gatewayClassCrd } from './gateway-api/gateway-class.ts';
import { httpRouteCrd } from './gateway-api/httproute.ts';
import { referenceGrantCrd } from './gateway-api/reference-grant.ts';
import { gatewayExtensionCrd } from './vendor/gateway-extension.ts';
import { gatewayParametersCrd } from './vendor/gateway-parameters.ts';
import { trafficPolicyCrd } from './vendor/traffic-policy.ts';

export type { Schema } from './schema-blocks.ts';

/** GatewayClass, Gateway, HTTPRoute (v1) and ReferenceGrant (v1beta1): gateway-api.yaml. */
export function gatewayApiCrds(): Record<string, unknown>[] {
  return [gatewayClassCrd(), gatewayCrd(), httpRouteCrd(), referenceGrantCrd()];
}

/** GatewayParameters, TrafficPolicy and GatewayExtension (gateway.gwvendor.dev/v1alpha1): gwvendor.yaml. */
export function vendorCrds(): Record<string, unknown>[] {
  return [gatewayParametersCrd(), trafficPolicyCrd(), gatewayExtensionCrd()];
}
