// Kube against the embedded API server: SSA apply, waits, deletes, and its requests over kept-alive connections.
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../embedded/apiserver/testing/test-lab.ts';
import { Kube } from './kube.ts';
import { WaitTimeout } from './wait.ts';

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.toolkit.gwlab.dev}
spec:
  group: toolkit.gwlab.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;

describe('toolkit: Kube', () => {
  let lab: TestLab;
  let kube: Kube;
  beforeAll(async () => {
    lab = await startTestLab({ labName: 'toolkit' });
    kube = Kube.fromFile(lab.server.kubeconfigPath);
  });
  afterAll(() => lab?.stop());

  it('applies CRD, namespace and custom resource in one multi-document YAML, in dependency order', async () => {
    const out = await kube.apply(`
apiVersion: toolkit.gwlab.dev/v1
kind: Widget
metadata: {name: w1, namespace: tk}
spec: {size: 3}
---
apiVersion: v1
kind: Namespace
metadata: {name: tk}
---
${CRD}`);
    expect(out.map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'Namespace', 'Widget']);
    const w = await kube.get('toolkit.gwlab.dev/v1', 'Widget', 'w1', 'tk');
    expect(w?.spec).toEqual({ size: 3 });
    // Applying again with a change is an update, not an error.
    await kube.apply({
      apiVersion: 'toolkit.gwlab.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'tk' },
      spec: { size: 4 },
    });
    expect((await kube.get('toolkit.gwlab.dev/v1', 'Widget', 'w1', 'tk'))?.spec.size).toBe(4);
  });

  it('waits for a condition, and times out saying what it saw', async () => {
    const w = await kube.get('toolkit.gwlab.dev/v1', 'Widget', 'w1', 'tk');
    const waiting = kube.waitForCondition('toolkit.gwlab.dev/v1', 'Widget', 'w1', 'tk', 'Ready', { timeoutMs: 10_000 });
    // Write through the status subresource as a controller would.
    await lab.k([
      'patch',
      'widget',
      'w1',
      '-n',
      'tk',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { conditions: [{ type: 'Ready', status: 'True', observedGeneration: w!.metadata!.generation }] },
      }),
    ]);
    const done = await waiting;
    // The CRD went in by server-side apply: its x-kubernetes-preserve-unknown-fields must have survived.
    const crd = await kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.toolkit.gwlab.dev');
    expect(crd?.spec.versions[0].schema.openAPIV3Schema.properties.status['x-kubernetes-preserve-unknown-fields']).toBe(
      true,
    );
    expect(done.status.conditions[0].type).toBe('Ready');
    await expect(
      kube.waitForCondition('toolkit.gwlab.dev/v1', 'Widget', 'w1', 'tk', 'Broken', { timeoutMs: 300 }),
    ).rejects.toThrow(WaitTimeout);
  });

  it('reuses kept-alive connections: 20 reads open at most 2 (client-node alone opened one per request)', async () => {
    // system/controlplane/kube/transport.ts; counted on undici's documented 'undici:client:connected' channel.
    const sockets: Socket[] = [];
    const ch = diagnostics.channel('undici:client:connected');
    const onConnected = (m: unknown) => {
      const { socket, connectParams } = m as { socket: Socket; connectParams: { port: string | number } };
      if (Number(connectParams.port) === lab.server.port) sockets.push(socket);
    };
    ch.subscribe(onConnected);
    try {
      for (let i = 0; i < 10; i++) {
        expect((await kube.get('v1', 'Namespace', 'tk'))?.metadata?.name).toBe('tk');
        expect((await kube.list('toolkit.gwlab.dev/v1', 'Widget', 'tk')).map((w) => w.metadata?.name)).toEqual(['w1']);
      }
    } finally {
      ch.unsubscribe(onConnected);
    }
    expect(sockets.length).toBeLessThanOrEqual(2);
  });

  it('deletes and waits for deletion', async () => {
    await kube.delete(
      { apiVersion: 'toolkit.gwlab.dev/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'tk' } },
      { wait: true },
    );
    expect(await kube.get('toolkit.gwlab.dev/v1', 'Widget', 'w1', 'tk')).toBeUndefined();
  });
});
