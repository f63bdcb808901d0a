// pods/log: the container's current or previous instance log with the options kubectl and client-node send
// (container, follow, previous, timestamps, tailLines, limitBytes, sinceSeconds, sinceTime), as text/plain.

import { join } from 'node:path';
import type { SubresourceRequest } from '../../apiserver/index.ts';
import type { Kubelet } from '../kubelet/kubelet.ts';
import { followLog, instanceLog, type LogReadOptions, readLog } from '../runtime/logs.ts';
import { pickContainer, sendStatus } from './subresource-util.ts';

function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name}: must be an integer, got ${JSON.stringify(v)}`);
  return n;
}

export function podLogHandler(kubelet: Kubelet) {
  return async (r: SubresourceRequest): Promise<void> => {
    const res = r.res;
    if (!res) return;
    const pod = r.object as any;
    const q = r.query;
    const pick = pickContainer(pod, q.get('container'));
    if (!pick.name) return sendStatus(res, 400, 'BadRequest', pick.error!);
    const container = pick.name;
    let opts: LogReadOptions;
    try {
      const since = intParam(q, 'sinceSeconds');
      opts = {
        timestamps: q.get('timestamps') === 'true',
        tailLines: intParam(q, 'tailLines'),
        limitBytes: intParam(q, 'limitBytes'),
        sinceTime: q.get('sinceTime') ?? (since !== undefined ? new Date(Date.now() - since * 1000) : undefined),
      };
    } catch (err) {
      return sendStatus(res, 400, 'BadRequest', (err as Error).message);
    }
    const previous = q.get('previous') === 'true';
    const dir = join(kubelet.opts.podsDir, pod.metadata.uid, 'logs', container);
    const file = instanceLog(dir, previous);
    if (!file) {
      if (previous) {
        return sendStatus(
          res,
          400,
          'BadRequest',
          `previous terminated container "${container}" in pod "${pod.metadata.name}" not found`,
        );
      }
      const st = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find(
        (s: any) => s.name === container,
      );
      const reason = st?.state?.waiting?.reason ?? 'ContainerCreating';
      return sendStatus(
        res,
        400,
        'BadRequest',
        `container "${container}" in pod "${pod.metadata.name}" is waiting to start: ${reason}`,
      );
    }
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
    if (q.get('follow') !== 'true' || previous) {
      res.end(readLog(file, opts));
      return;
    }
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    // Follow until the instance this file belongs to has exited (a restart starts a new file).
    const isCurrent = () => instanceLog(dir) === file;
    const done = () => !(isCurrent() && kubelet.worker(pod.metadata.uid)?.isRunning(container));
    try {
      for await (const chunk of followLog(file, opts, done, ac.signal)) {
        if (!res.write(chunk)) await new Promise((r2) => res.once('drain', r2));
      }
    } finally {
      res.end();
    }
  };
}
