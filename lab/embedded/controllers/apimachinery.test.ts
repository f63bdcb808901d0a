// The API-machinery controllers against a real API server, driven by kubectl: default ServiceAccount and root CA per
// namespace, garbage collection by ownerReferences (background, foreground, orphan) and namespace deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogRegistry } from '../../../system/shared/log.ts';
import { startTestLab, type TestLab } from '../apiserver/testing/test-lab.ts';
import { type ApiMachinery, startApiMachinery } from './apimachinery.ts';

let lab: TestLab;
let controllers: ApiMachinery;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
}

const exists = async (args: string[]) => (await lab.kubectl(['get', ...args, '-o', 'name'])).code === 0;
const json = async (args: string[]) => JSON.parse(await lab.k(['get', ...args, '-o', 'json']));
const create = (obj: unknown) =>
  lab.k(['create', '-f', '-', '-o', 'json'], JSON.stringify(obj)).then((s) => JSON.parse(s));
const cm = (
  name: string,
  ns: string,
  owners: { name: string; uid: string; kind?: string; apiVersion?: string; block?: boolean }[] = [],
  finalizers?: string[],
) =>
  create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: ns,
      ...(finalizers ? { finalizers } : {}),
      ownerReferences: owners.map((o) => ({
        apiVersion: o.apiVersion ?? 'v1',
        kind: o.kind ?? 'ConfigMap',
        name: o.name,
        uid: o.uid,
        ...(o.block ? { blockOwnerDeletion: true } : {}),
      })),
    },
  });

beforeAll(async () => {
  lab = await startTestLab();
  controllers = await startApiMachinery(
    await lab.server.kubeConfig({ user: 'system:kube-controller-manager' }),
    new LogRegistry({ level: 'warn', sink: (l) => process.stderr.write(`${l}\n`) }),
  );
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc' } });
});
afterAll(async () => {
  await controllers?.stop();
  await lab?.stop();
});

describe('service accounts', () => {
  it('every namespace gets a default ServiceAccount and kube-root-ca.crt, recreated after deletion', async () => {
    await until('default SA', () => exists(['sa', 'default', '-n', 'gc']));
    const ca = await until('root CA', async () => (await json(['cm', 'kube-root-ca.crt', '-n', 'gc'])).data['ca.crt']);
    expect(ca).toBe(lab.server.caPem);
    await lab.k(['delete', 'sa', 'default', '-n', 'gc']);
    await until('default SA recreated', () => exists(['sa', 'default', '-n', 'gc']));
    await until('system namespaces too', () => exists(['sa', 'default', '-n', 'kube-system']));
  });
});

describe('garbage collection', () => {
  it('background (kubectl default): dependents of a deleted owner are deleted; a second owner keeps its dependent', async () => {
    const owner = await cm('bg-owner', 'gc');
    const other = await cm('bg-other', 'gc');
    await cm('bg-dep-1', 'gc', [{ name: 'bg-owner', uid: owner.metadata.uid }]);
    await cm('bg-dep-2', 'gc', [{ name: 'bg-owner', uid: owner.metadata.uid }]);
    await cm('bg-shared', 'gc', [
      { name: 'bg-owner', uid: owner.metadata.uid },
      { name: 'bg-other', uid: other.metadata.uid },
    ]);
    await lab.k(['delete', 'cm', 'bg-owner', '-n', 'gc']);
    await until(
      'dependents gone',
      async () => !(await exists(['cm', 'bg-dep-1', '-n', 'gc'])) && !(await exists(['cm', 'bg-dep-2', '-n', 'gc'])),
    );
    const shared = await until('shared dependent loses the reference', async () => {
      const o = await json(['cm', 'bg-shared', '-n', 'gc']);
      return o.metadata.ownerReferences?.length === 1 ? o : undefined;
    });
    expect(shared.metadata.ownerReferences[0].name).toBe('bg-other');
  });

  it('a Deployment deletion cascades to its ReplicaSet', async () => {
    const d = await create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'gc' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    await create({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'web-abc',
        namespace: 'gc',
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'web',
            uid: d.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    expect(await lab.k(['delete', 'deploy', 'web', '-n', 'gc'])).toMatch(/deleted/);
    await until('replicaset gone', async () => !(await exists(['rs', 'web-abc', '-n', 'gc'])));
  });

  it('foreground: the owner waits for dependents that block its deletion', async () => {
    const owner = await cm('fg-owner', 'gc');
    await cm('fg-dep', 'gc', [{ name: 'fg-owner', uid: owner.metadata.uid, block: true }], ['test.gwlab.dev/hold']);
    const del = await lab.kubectl(['delete', 'cm', 'fg-owner', '-n', 'gc', '--cascade=foreground', '--wait=false']);
    expect(del.code, del.stderr).toBe(0);
    const held = await until('dependent being deleted', async () => {
      const o = await json(['cm', 'fg-dep', '-n', 'gc']);
      return o.metadata.deletionTimestamp ? o : undefined;
    });
    expect(held.metadata.finalizers).toEqual(['test.gwlab.dev/hold']);
    const o = await json(['cm', 'fg-owner', '-n', 'gc']);
    expect(o.metadata.deletionTimestamp).toBeTruthy();
    expect(o.metadata.finalizers).toContain('foregroundDeletion');
    await lab.k(['patch', 'cm', 'fg-dep', '-n', 'gc', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await until('owner gone after its dependent', async () => !(await exists(['cm', 'fg-owner', '-n', 'gc'])));
  });

  it('orphan: dependents stay and lose their owner reference', async () => {
    const owner = await cm('or-owner', 'gc');
    await cm('or-dep', 'gc', [{ name: 'or-owner', uid: owner.metadata.uid }]);
    await lab.k(['delete', 'cm', 'or-owner', '-n', 'gc', '--cascade=orphan']);
    await until('owner gone', async () => !(await exists(['cm', 'or-owner', '-n', 'gc'])));
    const dep = await json(['cm', 'or-dep', '-n', 'gc']);
    expect(dep.metadata.ownerReferences).toBeUndefined();
  });

  it('custom resources take part once their CRD is created (rediscovery on CRD changes)', async () => {
    await create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    const owner = await create({
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g1', namespace: 'gc' },
    });
    await cm('g-dep', 'gc', [{ name: 'g1', uid: owner.metadata.uid, kind: 'Gadget', apiVersion: 'example.com/v1' }]);
    const cmOwner = await cm('g-owner', 'gc');
    await create({
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: {
        name: 'g2',
        namespace: 'gc',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'g-owner', uid: cmOwner.metadata.uid }],
      },
    });
    await lab.k(['delete', 'gadget', 'g1', '-n', 'gc']);
    await lab.k(['delete', 'cm', 'g-owner', '-n', 'gc']);
    await until('configmap owned by a custom resource gone', async () => !(await exists(['cm', 'g-dep', '-n', 'gc'])));
    await until('custom resource owned by a configmap gone', async () => !(await exists(['gadget', 'g2', '-n', 'gc'])));
  });

  it('dependents whose owner never existed (or has another uid) are collected', async () => {
    await cm('stale-owner', 'gc');
    await cm('stale-dep', 'gc', [{ name: 'stale-owner', uid: '00000000-0000-0000-0000-000000000000' }]);
    await until('stale dependent gone', async () => !(await exists(['cm', 'stale-dep', '-n', 'gc'])));
    expect(await exists(['cm', 'stale-owner', '-n', 'gc'])).toBe(true);
  });
});

describe('namespace deletion', () => {
  it('deleting a namespace removes the objects in it, then the namespace', async () => {
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    await cm('a', 'doomed');
    await create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'doomed' },
      stringData: { k: 'v' },
    });
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'doomed' },
      spec: { containers: [{ name: 'c', image: 'x:1' }] },
    });
    const r = await lab.kubectl(['delete', 'namespace', 'doomed', '--timeout=20s']);
    expect(r.code, r.stderr).toBe(0);
    expect(await exists(['ns', 'doomed'])).toBe(false);
    // Recreated empty: nothing survived.
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    expect(
      (
        await lab.k([
          'get',
          'cm,secret,pod',
          '-n',
          'doomed',
          '-o',
          'name',
          '--field-selector',
          'metadata.name!=kube-root-ca.crt',
        ])
      ).trim(),
    ).toBe('');
    const created = await lab.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: 'gone-ns' } }),
    });
    expect(created.stderr).toMatch(/namespaces "gone-ns" not found/);
  });
});
