// The project's CRDs for tests that install them with kubectl rather than lab:up: the vendored Gateway API standard
// bundle's CRDs (without its admission policy and binding, which not every test cluster serves) and gwlab's own, as
// one YAML stream for `kubectl apply --server-side -f -` (a client-side apply would store the whole CRD again in the
// last-applied annotation, over its 256 KiB limit for the larger upstream CRDs).
import { gatewayApiBundle, readManifest } from '../install.ts';

/** How many CRDs projectCrdsYaml holds. */
export const PROJECT_CRD_COUNT = 13;

export function projectCrdsYaml(): string {
  const docs = [
    ...gatewayApiBundle('standard').filter((d) => d.kind === 'CustomResourceDefinition'),
    ...readManifest('crds/gwvendor.yaml'),
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n---\n');
}
