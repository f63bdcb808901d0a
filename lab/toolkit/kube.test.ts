// Kube against the embedded API server: SSA apply, waits, deletes, and its requests over kept-alive connections.
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { dumpYaml } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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

  it("reads a CRD back as plain JSON: what client-node's dumpYaml prints, dates as strings, no undefined keys", async () => {
    const name = 'widgets.toolkit.gwlab.dev';
    const crd = await kube.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);
    const model = await kube.objects.read({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
    });
    expect(crd).toEqual(parse(dumpYaml(model)));
    expect(typeof crd!.metadata!.creationTimestamp).toBe('string');
    expect(crd!.status.conditions.find((c: any) => c.type === 'Established')).toMatchObject({ status: 'True' });
    expect(JSON.stringify(crd)).not.toContain('x_kubernetes');
    // getCrd reads it in one request as the API server sends it: what kubectl prints (timestamps as sent, whole seconds).
    expect(await kube.getCrd(name)).toEqual(
      JSON.parse(await lab.k(['get', 'crd', name, '-o', 'json', '--show-managed-fields'])),
    );
    expect(await kube.getCrd('absent.toolkit.gwlab.dev')).toBeUndefined();
  });

  it('waits for a rollout woken by a watch of the Deployment (as kubectl rollout status), not by its next poll', async () => {
    // No controllers here: the test writes the status a deployment controller would.
    await kube.apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'tk' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } },
      },
    });
    // One poll a minute: only the watch can end this wait within its 20 s.
    const rolledOut = kube.waitForRollout('web', 'tk', { intervalMs: 60_000, timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300));
    const d = await kube.get('apps/v1', 'Deployment', 'web', 'tk');
    const status = {
      observedGeneration: d!.metadata!.generation,
      replicas: 1,
      updatedReplicas: 1,
      availableReplicas: 1,
    };
    await lab.k([
      'patch',
      'deployment',
      'web',
      '-n',
      'tk',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
    expect((await rolledOut).status).toMatchObject(status);
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
