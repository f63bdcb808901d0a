// bench:apiserver's client paths: the cost of a GET of one ConfigMap through client-node over HTTPS as the project
// configures it (lab/toolkit/kube.ts's Kube: kept-alive connections, system/controlplane/kube/connections.ts), through
// client-node with the library's defaults (a new TLS connection per request), through raw HTTPS (undici request()),
// and as an in-process call of the same verb code without HTTP — the figures that decided how the lab's controllers
// talk to the server. The HTTPS paths are timed in interleaved rounds (the machine is shared: a busy spell then
// weighs on every path alike), each figure the median of its rounds.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Core } from '../../lab/embedded/apiserver/core.ts';
import { ResourceRegistry } from '../../lab/embedded/apiserver/resources.ts';
import { Store } from '../../lab/embedded/apiserver/store.ts';
import { loadModelValidators } from '../../lab/embedded/apiserver/validation.ts';
import { Kube } from '../../lab/toolkit/kube.ts';
import { closeConnections } from '../../system/controlplane/kube/connections.ts';
import { progress } from '../shared/reports.ts';
import { median } from '../shared/stats.ts';
import type { ApiServer } from './server-process.ts';
import { payload } from './writes-and-lists.ts';

const step = progress('apiserver');
const ROUNDS = 5;
/** GETs per path and round (500 per path in all, as before the rounds). */
const PER_ROUND = 100;

/** µs per call of `fn`, over `n` calls. */
async function timeIt(fn: () => Promise<unknown> | unknown, n: number): Promise<number> {
  const s = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - s) / n) * 1000;
}

/** Each path's median µs per call over interleaved rounds, after 20 unmeasured calls each. */
async function interleaved<K extends string>(paths: Record<K, () => Promise<unknown>>): Promise<Record<K, number>> {
  const names = Object.keys(paths) as K[];
  for (const k of names) await timeIt(paths[k], 20);
  const rounds = Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < ROUNDS; r++) for (const k of names) rounds[k].push(await timeIt(paths[k], PER_ROUND));
  return Object.fromEntries(names.map((k) => [k, median(rounds[k])])) as Record<K, number>;
}

/** GETs small/cm-1 (which the lists phase created) four ways; µs per GET. */
export async function clientPathPhase(s: ApiServer) {
  step('client path cost (GET of one ConfigMap)');
  const kube = Kube.fromFile(s.kubeconfig);
  const plain = new KubeConfig();
  plain.loadFromFile(s.kubeconfig);
  const defaults = plain.makeApiClient(CoreV1Api);
  const get = { namespace: 'small', name: 'cm-1' };
  const https = await interleaved({
    clientNode: () => kube.core.readNamespacedConfigMap(get),
    clientNodeDefault: () => defaults.readNamespacedConfigMap(get),
    raw: () => s.req('GET', '/api/v1/namespaces/small/configmaps/cm-1'),
  });
  await closeConnections(kube.kc);
  await loadModelValidators();
  const memStore = new Store();
  const core = new Core(memStore, new ResourceRegistry());
  const nsRt = core.registry.get('', 'v1', 'namespaces')!;
  const cmRt = core.registry.get('', 'v1', 'configmaps')!;
  const wo = { dryRun: false, fieldValidation: 'Strict' as const, warnings: [], defaultManager: 'bench' };
  core.create(nsRt, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'small' } }, wo);
  core.create(cmRt, 'small', payload(1), wo);
  await timeIt(() => JSON.stringify(core.get(cmRt, 'small', 'cm-1')), 20);
  const inProcUs = await timeIt(() => JSON.stringify(core.get(cmRt, 'small', 'cm-1')), ROUNDS * PER_ROUND);
  return { clientNodeUs: https.clientNode, clientNodeDefaultUs: https.clientNodeDefault, rawUs: https.raw, inProcUs };
}
