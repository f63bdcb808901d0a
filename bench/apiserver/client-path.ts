// bench:apiserver's client paths: the cost of a GET of one ConfigMap through client-node over HTTPS as the project
// configures it (lab/toolkit/kube.ts's Kube: kept-alive connections and request() instead of fetch(),
// system/controlplane/kube/transport.ts), through
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
import { closeTransport } from '../../system/controlplane/kube/transport.ts';
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

/**
 * Each path's median µs per call over interleaved rounds, after 20 unmeasured calls each; and the CPU time this
 * process spent per call on it (user + system, all rounds), which waiting for a busy machine's CPU does not inflate.
 */
async function interleaved<K extends string>(paths: Record<K, () => Promise<unknown>>) {
  const names = Object.keys(paths) as K[];
  for (const k of names) await timeIt(paths[k], 20);
  const rounds = Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  const cpu = Object.fromEntries(names.map((k) => [k, 0])) as Record<K, number>;
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of names) {
      const c0 = process.cpuUsage();
      rounds[k].push(await timeIt(paths[k], PER_ROUND));
      const c = process.cpuUsage(c0);
      cpu[k] += (c.user + c.system) / (ROUNDS * PER_ROUND);
    }
  }
  const us = Object.fromEntries(names.map((k) => [k, median(rounds[k])])) as Record<K, number>;
  return { us, cpuUs: cpu };
}

/** GETs small/cm-1 (which the lists phase created) four ways; µs per GET. */
export async function clientPathPhase(s: ApiServer) {
  step('client path cost (GET of one ConfigMap)');
  const kube = Kube.fromFile(s.kubeconfig);
  const plain = new KubeConfig();
  plain.loadFromFile(s.kubeconfig);
  const defaults = plain.makeApiClient(CoreV1Api);
  const get = { namespace: 'small', name: 'cm-1' };
  const { us, cpuUs } = await interleaved({
    clientNode: () => kube.core.readNamespacedConfigMap(get),
    clientNodeDefault: () => defaults.readNamespacedConfigMap(get),
    raw: () => s.req('GET', '/api/v1/namespaces/small/configmaps/cm-1'),
  });
  await closeTransport(kube.kc);
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
  return { clientNodeUs: us.clientNode, clientNodeDefaultUs: us.clientNodeDefault, rawUs: us.raw, inProcUs, cpuUs };
}
