// What every Gateway API CRD the project ships shares: the upstream bundle version and channel it follows (as
// annotations, with a note that it is gwlab's subset), its group and category.
import { type CrdSpec, crd } from '../crd.ts';

/** Which upstream Gateway API release the shipped subset follows (its standard channel). */
export const GATEWAY_API_BUNDLE_VERSION = 'v1.3.0';

const GW_ANNOTATIONS = {
  'gateway.networking.k8s.io/bundle-version': GATEWAY_API_BUNDLE_VERSION,
  'gateway.networking.k8s.io/channel': 'standard',
  'gateway.gwvendor.dev/subset':
    'the Gateway API fields gwlab supports; the lab keeps a cluster’s own Gateway API CRDs when it has them',
};

/** A CRD of gateway.networking.k8s.io, annotated with the bundle it follows. */
export function gatewayApiCrd(s: Omit<CrdSpec, 'group' | 'categories' | 'annotations'>): Record<string, unknown> {
  return crd({ group: 'gateway.networking.k8s.io', categories: ['gateway-api'], annotations: GW_ANNOTATIONS, ...s });
}
