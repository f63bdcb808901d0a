// What every vendor CRD shares: the group gateway.gwvendor.dev, its one version v1alpha1, namespaced, in the category
// gwvendor.
import { type CrdSpec, crd } from '../crd.ts';

export const VENDOR_GROUP = 'gateway.gwvendor.dev';

/** A namespaced CRD of gateway.gwvendor.dev/v1alpha1. */
export function vendorCrd(s: Omit<CrdSpec, 'group' | 'categories' | 'scope' | 'version'>): Record<string, unknown> {
  return crd({ group: VENDOR_GROUP, categories: ['gwvendor'], scope: 'Namespaced', version: 'v1alpha1', ...s });
}
