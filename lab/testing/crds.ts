// The project's CRDs for tests that install them without lab:up: the vendored Gateway API standard bundle's CRDs
// (without its admission policy and binding, which not every test cluster serves) and gwlab's own; as documents, and
// as one JSON stream for `kubectl apply --server-side -f -` (a client-side apply would store the whole CRD again in
// the last-applied annotation, over its 256 KiB limit for the larger upstream CRDs).
import { gatewayApiBundle, readManifest } from '../install.ts';
import type { KObj } from '../toolkit/kube.ts';

export function projectCrds(): KObj[] {
  return [
    ...gatewayApiBundle('standard').filter((d) => d.kind === 'CustomResourceDefinition'),
    ...readManifest('crds/gwvendor.yaml'),
  ];
}

/** How many CRDs projectCrds holds (counted, so a new vendor kind needs no second edit here). */
export const PROJECT_CRD_COUNT = projectCrds().length;

/** projectCrds as kubectl reads a stream of JSON objects (one after another, no `---` between them). */
export function projectCrdsJson(): string {
  return projectCrds()
    .map((d) => JSON.stringify(d))
    .join('\n');
}
