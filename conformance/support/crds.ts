// TEMPORARY (issue 18, until main's lab installs the vendored v1.6.1 bundle itself): the conformance labs get the
// vendored Gateway API v1.6.1 standard CRDs (system/manifests/gateway-api/standard-install.yaml, CRDs only: the
// embedded API server does not serve admissionregistration.k8s.io yet), server-side applied with force over the
// lab's v1.3.0 subset, because upstream's base manifests need v1.6.1 fields (listener `tls`). Clusters whose Gateway
// API CRDs gwlab did not install are left as they are. Remove this file once `git log main` says the lab installs
// the vendored bundle.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasForeignGatewayApiCrds } from '../../lab/install.ts';
import { type Kube, parseYamlDocs } from '../../lab/toolkit/kube.ts';

const BUNDLE = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '../..'),
  'system/manifests/gateway-api/standard-install.yaml',
);

export async function installVendoredCrdsTemporarily(kube: Kube): Promise<boolean> {
  if (await hasForeignGatewayApiCrds(kube)) return false;
  const crds = parseYamlDocs(readFileSync(BUNDLE, 'utf8')).filter((d) => d?.kind === 'CustomResourceDefinition');
  await kube.apply(crds, { force: true });
  return true;
}
