// Test support: a throw-away API server with the vendored Gateway API v1.6.1 CRDs (system/manifests/gateway-api/,
// standard or experimental bundle) created from the bundle's CustomResourceDefinition documents, as
// `kubectl apply --server-side -f <bundle>` creates them (the bundle's admission policies are another helper's
// part of issue 18 and are left out here).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { api } from '../../lab/embedded/apiserver/testing/requests.ts';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';

export const ROOT = join(import.meta.dirname, '..', '..');
export const UPSTREAM = join(ROOT, 'tests', 'upstream', 'gateway-api');

export type Channel = 'standard' | 'experimental';

/** The CRDs of a bundle, parsed. */
export function bundleCrds(channel: Channel): any[] {
  const text = readFileSync(join(ROOT, 'system', 'manifests', 'gateway-api', `${channel}-install.yaml`), 'utf8');
  return YAML.parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((d) => d?.kind === 'CustomResourceDefinition');
}

/** A test lab with the bundle's CRDs created (each create must succeed: the CRDs' rules compile). */
export async function labWithGatewayApi(channel: Channel): Promise<TestLab> {
  const lab = await startTestLab();
  for (const crd of bundleCrds(channel)) {
    const r = await api(lab, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    if (r.status !== 201) {
      await lab.stop();
      throw new Error(`CRD ${crd.metadata.name}: ${r.status} ${r.text}`);
    }
  }
  return lab;
}
