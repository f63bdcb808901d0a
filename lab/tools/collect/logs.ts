// The log of every container of every pod in the collected namespaces, read through the pods/log API (so it works on
// every backend), as logs/<namespace>/<pod>/<container>.log; with previousLogs also the instance before the last
// restart (<container>.previous.log) for containers that restarted.
import { type KObj, statusCode } from '../../toolkit/kube.ts';
import { mapLimit } from '../proxies.ts';
import { CORE_POD } from './inventory.ts';
import type { Collector } from './types.ts';

/** A busy debug-level proxy log can be large: a collection keeps its tail. */
export const LOG_TAIL_LINES = 50_000;
const PARALLEL_READS = 8;

interface LogRead {
  namespace: string;
  pod: string;
  container: string;
  previous: boolean;
}

function restartCount(pod: KObj, container: string): number {
  const all = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return all.find((s: { name: string }) => s.name === container)?.restartCount ?? 0;
}

function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** Every log to read: each init, regular and ephemeral container, and its previous instance when asked for. */
export function logReads(pods: KObj[], previousLogs: boolean): LogRead[] {
  const out: LogRead[] = [];
  for (const p of pods) {
    const spec = p.spec ?? {};
    const containers = [
      ...(spec.initContainers ?? []),
      ...(spec.containers ?? []),
      ...(spec.ephemeralContainers ?? []),
    ];
    for (const c of containers as Array<{ name: string }>) {
      const base = { namespace: p.metadata!.namespace!, pod: p.metadata!.name!, container: c.name };
      out.push({ ...base, previous: false });
      if (previousLogs && restartCount(p, c.name) > 0) out.push({ ...base, previous: true });
    }
  }
  return out;
}

export const logsCollector: Collector = {
  name: 'logs',
  what: 'the log of every container of every pod in the collected namespaces (and the previous instance after a restart)',
  async run({ kube, inventory, options }, out) {
    const pods = (await inventory.list(CORE_POD))?.items ?? [];
    const reads = logReads(pods, !!options.previousLogs);
    const notes: string[] = [];
    const errors: string[] = [];
    let written = 0;
    await mapLimit(reads, PARALLEL_READS, async (r) => {
      const what = `${r.namespace}/${r.pod} container ${r.container}${r.previous ? ' (previous)' : ''}`;
      let body: string;
      try {
        body = String(
          (await kube.core.readNamespacedPodLog({
            name: r.pod,
            namespace: r.namespace,
            container: r.container,
            previous: r.previous,
            tailLines: LOG_TAIL_LINES,
          })) ?? '',
        );
      } catch (err) {
        const code = statusCode(err);
        // 400: the container has not started (or has no previous instance); 404: the pod went away since the list.
        if (code === 400 || code === 404) {
          notes.push(`${what}: no log (${code === 404 ? 'pod gone' : 'container not started'})`);
          return;
        }
        errors.push(`${what}: ${(err as Error).message}`);
        return;
      }
      // As many lines as asked for: the log was probably longer, and this is its tail.
      if (countLines(body) >= LOG_TAIL_LINES) notes.push(`${what}: only the last ${LOG_TAIL_LINES} lines`);
      await out.write(`logs/${r.namespace}/${r.pod}/${r.container}${r.previous ? '.previous' : ''}.log`, body);
      written++;
    });
    notes.sort();
    notes.unshift(`${written} logs of ${pods.length} pods`);
    return { notes, errors };
  },
};
