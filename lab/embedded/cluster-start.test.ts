// The embedded cluster's start order (cluster.ts), which lab:up's critical path follows (issue 14): the lab record is
// written as soon as the API server serves, marked `starting`, so that lab:up (lab/embedded/process.ts) applies the
// CRDs and the control plane while the controllers and the node agent start; once they have, the record is written
// again without the mark, and lab:up's "embedded cluster" step ends. Before, the record was written only at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type LabRecord, readLabRecord } from '../state.ts';
import { KubeClient } from './client/kube-client.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from './cluster.ts';
import { apiServerReady } from './process.ts';

const home = mkdtempSync(join(tmpdir(), 'gwlab-cluster-start-'));
const name = 'start';
let cluster: EmbeddedCluster | undefined;

afterAll(async () => {
  await cluster?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('the embedded cluster start', () => {
  it('writes the lab record once the API server serves, marked starting; without the mark once the node agent runs', async () => {
    let serving: { record?: LabRecord; ready: boolean; nodes: number } | undefined;
    cluster = await startEmbeddedCluster({
      name,
      home,
      logSink: () => {},
      onServing: async (apiServer) => {
        const record = readLabRecord(name, home);
        const client = new KubeClient(apiServer.credentials());
        try {
          const nodes = await client.request('GET', '/api/v1/nodes');
          serving = { record, ready: !!record && (await apiServerReady(record, home)), nodes: nodes.items.length };
        } finally {
          await client.close();
        }
      },
    });
    // What lab:up sees when its install starts: a record it can use, an API server that serves, no Node yet.
    expect(serving?.record).toMatchObject({ name, backend: 'embedded', pid: process.pid, starting: true });
    expect(serving?.ready).toBe(true);
    expect(serving?.nodes).toBe(0);
    // Started: the same record without the mark, and the node agent's Node registered.
    const final = readLabRecord(name, home)!;
    expect(final.starting).toBeUndefined();
    expect({ ...final, startedAt: undefined }).toEqual({
      ...serving!.record,
      starting: undefined,
      startedAt: undefined,
    });
    const client = new KubeClient(cluster.apiServer.credentials());
    try {
      expect((await client.request('GET', '/api/v1/nodes')).items.map((n: any) => n.metadata.name)).toEqual([
        `${name}-control-plane`,
      ]);
    } finally {
      await client.close();
    }
  });
});
