// raw.ts against an embedded API server: objects as the server sent them, refusals as ApiError, and the reads of a
// Kube's KubeConfig over kept-alive connections (system/controlplane/kube/transport.ts) — before, each GET went over
// a new TLS connection of its own (https.request with client-node's non-keep-alive https.Agent). Connections are
// counted where the server accepts them: Node's built-in diagnostics channel 'net.server.socket' (the server runs in
// this process), filtered to its port.
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../embedded/apiserver/testing/test-lab.ts';
import { Kube } from '../../toolkit/kube.ts';
import { ApiError, getJson, listAll } from './raw.ts';

describe('raw reads (collect/raw.ts)', () => {
  let lab: TestLab;
  let kube: Kube;
  beforeAll(async () => {
    lab = await startTestLab({ labName: 'raw' });
    kube = Kube.fromFile(lab.server.kubeconfigPath);
    await kube.apply(
      [1, 2, 3].map((i) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: 'default' },
      })),
    );
  });
  afterAll(() => lab?.stop());

  it('reads lists and objects as sent, over kept-alive connections, and refusals as ApiError', async () => {
    const accepted: Socket[] = [];
    const ch = diagnostics.channel('net.server.socket');
    const onAccepted = (m: unknown) => {
      const { socket } = m as { socket: Socket };
      if (socket.localPort === lab.server.port) accepted.push(socket);
    };
    ch.subscribe(onAccepted);
    try {
      for (let i = 0; i < 5; i++) {
        const cms = await listAll(kube.kc, '/api/v1/namespaces/default/configmaps');
        expect(cms.map((c) => c.metadata.name).filter((n: string) => n.startsWith('cm-'))).toEqual([
          'cm-1',
          'cm-2',
          'cm-3',
        ]);
        expect((await getJson(kube.kc, '/api/v1/namespaces/default')).metadata.name).toBe('default');
      }
      const err = await getJson(kube.kc, '/api/v1/namespaces/nope').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe(404);
    } finally {
      ch.unsubscribe(onAccepted);
    }
    // 11 GETs; before, 11 connections.
    expect(accepted.length).toBeLessThanOrEqual(2);
  });
});
