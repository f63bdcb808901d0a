// Server-side apply semantics (structured-merge-diff) through the verbs, on an in-memory store.
import { beforeAll, expect, it } from 'vitest';
import { Core, type WriteOptions } from './core.ts';
import { ApiError } from './errors.ts';
import { fieldsOf, fromFieldsV1, toFieldsV1 } from './managedfields.ts';
import { ResourceRegistry, type ResourceType } from './resources.ts';
import { Store } from './store.ts';
import { loadModelValidators } from './validation.ts';

let core: Core;
let deploy: ResourceType;
const wo = (fieldManager?: string): WriteOptions => ({
  dryRun: false,
  fieldValidation: 'Strict',
  warnings: [],
  defaultManager: 'test',
  fieldManager,
});

beforeAll(async () => {
  await loadModelValidators();
  core = new Core(new Store(), new ResourceRegistry());
  core.create(
    core.registry.get('', 'v1', 'namespaces')!,
    undefined,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } },
    wo(),
  );
  deploy = core.registry.get('apps', 'v1', 'deployments')!;
});

const d = (spec: Record<string, unknown>, labels?: Record<string, string>) =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', ...(labels ? { labels } : {}) },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
        ...spec,
      },
    }),
  );
const apply = (mgr: string, body: Buffer, force = false) =>
  core.patch(deploy, 'ns', 'web', 'application/apply-patch+yaml', body, { ...wo(mgr), force }).obj;

it('owners, conflicts, shared ownership, force and removal of fields left out', () => {
  apply('alice', d({ replicas: 2 }, { team: 'a' }));
  // Same value: shared ownership, no conflict.
  apply('bob', d({ replicas: 2 }));
  // Different value for a field alice owns: conflict naming manager and field.
  let err: unknown;
  try {
    apply('bob', d({ replicas: 3 }));
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe(409);
  expect((err as ApiError).message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
  // Forced: bob takes .spec.replicas; alice loses it.
  let o = apply('bob', d({ replicas: 3 }), true);
  expect(o.spec.replicas).toBe(3);
  const alice = o.metadata.managedFields.find((m: any) => m.manager === 'alice');
  expect(alice.fieldsV1['f:spec']['f:replicas']).toBeUndefined();
  // alice stops applying her label: removed (nobody else owns it).
  o = apply('alice', d({}));
  expect(o.metadata.labels).toBeUndefined();
  // bob stops applying replicas: removed and defaulted again.
  o = apply('bob', d({}));
  expect(o.spec.replicas).toBe(1);
});

it('list-map items merge by key; an Update by another manager takes the fields it changes', () => {
  const base = JSON.parse(d({}).toString());
  base.spec.template.spec.containers = [{ name: 'c', image: 'x:1', env: [{ name: 'A', value: '1' }] }];
  apply('alice', Buffer.from(JSON.stringify(base)));
  const other = JSON.parse(d({}).toString());
  other.spec.template.spec.containers = [{ name: 'c', image: 'x:1', env: [{ name: 'B', value: '2' }] }];
  let o = apply('bob', Buffer.from(JSON.stringify(other)));
  expect(o.spec.template.spec.containers[0].env.map((e: any) => e.name).sort()).toEqual(['A', 'B']);
  o = core.patch(
    deploy,
    'ns',
    'web',
    'application/merge-patch+json',
    Buffer.from('{"spec":{"minReadySeconds":5}}'),
    wo('carol'),
  ).obj;
  const carol = o.metadata.managedFields.find((m: any) => m.manager === 'carol');
  expect(carol.operation).toBe('Update');
  expect(carol.fieldsV1['f:spec']['f:minReadySeconds']).toEqual({});
  expect(() => apply('alice', d({ minReadySeconds: 9 }))).toThrow(
    /conflict with "carol" using apps\/v1: \.spec\.minReadySeconds/,
  );
});

it('FieldsV1 round-trips and marks list items with "."', () => {
  const set = fieldsOf({ spec: { ports: [{ port: 80, protocol: 'TCP', name: 'http' }] } }, deploy.schema);
  const f = toFieldsV1(set);
  expect(fromFieldsV1(f)).toEqual(set);
  const svc = core.registry.get('', 'v1', 'services')!;
  const s2 = toFieldsV1(fieldsOf({ spec: { ports: [{ port: 80, name: 'http' }] } }, svc.schema));
  expect(s2['f:spec']['f:ports']['k:{"port":80,"protocol":"TCP"}']).toEqual({ '.': {}, 'f:name': {}, 'f:port': {} });
});
