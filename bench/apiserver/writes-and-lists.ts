// bench:apiserver's store phases: TOTAL ConfigMaps (~1 KB) created by 16 concurrent clients (creates/s, latency,
// server and client CPU per create), the server's memory holding them, and list latency at 10,000 and at 1,000
// objects (JSON, and the Table a `kubectl get` asks for, first page of 500).

import { cpuMs, rssMb } from '../shared/proc.ts';
import { progress } from '../shared/reports.ts';
import type { ApiServer, Request } from './server-process.ts';
import { CLIENTS, TOTAL } from './settings.ts';

const step = progress('apiserver');

/** A ConfigMap of ~1 KB serialized: 900 bytes of data plus metadata. */
export function payload(i: number) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}`, labels: { bench: 'yes', shard: String(i % 10) } },
    data: { payload: 'x'.repeat(900) },
  };
}

/** Creates ConfigMaps 0..n-1 in `namespace` with CLIENTS concurrent clients; `lat` gets each create's latency. */
async function createAll(req: Request, namespace: string, n: number, lat?: number[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        await req('POST', `/api/v1/namespaces/${namespace}/configmaps`, payload(i));
        lat?.push(performance.now() - s);
      }
    }),
  );
}

export async function createsPhase(s: ApiServer) {
  step(`creating ${TOTAL} ConfigMaps (~1 KB) with ${CLIENTS} concurrent clients`);
  const lat: number[] = [];
  const serverCpu0 = cpuMs(s.child.pid!);
  const clientCpu0 = process.cpuUsage();
  const t0 = performance.now();
  await createAll(s.req, 'bench', TOTAL, lat);
  const createSec = (performance.now() - t0) / 1000;
  const serverUsPerCreate = ((cpuMs(s.child.pid!) - serverCpu0) * 1000) / TOTAL;
  const cc = process.cpuUsage(clientCpu0);
  const clientUsPerCreate = (cc.user + cc.system) / TOTAL;
  const createsPerSec = TOTAL / createSec;
  step(`${Math.round(createsPerSec)} creates/s`);
  return { lat, createSec, serverUsPerCreate, clientUsPerCreate, createsPerSec };
}

/** The server's RSS and process.memoryUsage() holding the objects, after a GC-friendly pause. */
export async function memoryPhase(s: ApiServer) {
  await new Promise((r) => setTimeout(r, 1000));
  const rss10k = rssMb(s.child.pid!);
  const mem10k = (await s.diag<{ memory: NodeJS.MemoryUsage }>('memory')).memory;
  return { rss10k, mem10k };
}

export async function listsPhase(s: ApiServer) {
  const listTimes = async (path: string, n: number, accept?: string) => {
    const out: number[] = [];
    await s.req('GET', path, undefined, accept);
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await s.req('GET', path, undefined, accept);
      out.push(performance.now() - t);
    }
    return out;
  };
  step('list latency at 10,000 objects');
  const list10k = await listTimes('/api/v1/namespaces/bench/configmaps', 10);
  step('creating 1,000 more for the 1,000-object list');
  await createAll(s.req, 'small', 1000);
  const listCpu0 = cpuMs(s.child.pid!);
  const list1k = await listTimes('/api/v1/namespaces/small/configmaps', 30);
  // Server CPU per 1,000-object list (31 lists: the warm-up one too).
  const listServerCpuMs = (cpuMs(s.child.pid!) - listCpu0) / 31;
  const table1k = await listTimes(
    '/api/v1/namespaces/small/configmaps?limit=500',
    30,
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  );
  return { list10k, list1k, listServerCpuMs, table1k };
}
