// bench:apiserver's client paths: the cost of a GET of one ConfigMap through client-node over HTTPS, through raw
// HTTPS (undici), and as an in-process call of the same verb code without HTTP — the figures that decided how the
// lab's controllers talk to the server.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Core } from '../../lab/embedded/apiserver/core.ts';
import { ResourceRegistry } from '../../lab/embedded/apiserver/resources.ts';
import { Store } from '../../lab/embedded/apiserver/store.ts';
import { loadModelValidators } from '../../lab/embedded/apiserver/validation.ts';
import { progress } from '../shared/reports.ts';
import type { ApiServer } from './server-process.ts';
import { payload } from './writes-and-lists.ts';

const step = progress('apiserver');
const N = 500;

/** µs per call of `fn`, over N calls after 20 unmeasured ones. */
async function timeIt(fn: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < 20; i++) await fn();
  const s = performance.now();
  for (let i = 0; i < N; i++) await fn();
  return ((performance.now() - s) / N) * 1000;
}

/** GETs small/cm-1 (which the lists phase created) three ways; µs per GET. */
export async function clientPathPhase(s: ApiServer) {
  step('client path cost (GET of one ConfigMap)');
  const kc = new KubeConfig();
  kc.loadFromFile(s.kubeconfig);
  const api = kc.makeApiClient(CoreV1Api);
  const clientNodeUs = await timeIt(() => api.readNamespacedConfigMap({ namespace: 'small', name: 'cm-1' }));
  const rawUs = await timeIt(() => s.req('GET', '/api/v1/namespaces/small/configmaps/cm-1'));
  await loadModelValidators();
  const memStore = new Store();
  const core = new Core(memStore, new ResourceRegistry());
  const nsRt = core.registry.get('', 'v1', 'namespaces')!;
  const cmRt = core.registry.get('', 'v1', 'configmaps')!;
  const wo = { dryRun: false, fieldValidation: 'Strict' as const, warnings: [], defaultManager: 'bench' };
  core.create(nsRt, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'small' } }, wo);
  core.create(cmRt, 'small', payload(1), wo);
  const inProcUs = await timeIt(() => JSON.stringify(core.get(cmRt, 'small', 'cm-1')));
  return { clientNodeUs, rawUs, inProcUs };
}
