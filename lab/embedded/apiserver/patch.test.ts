// Strategic merge patch directives as kubectl's three-way patches use them, and merge/JSON patch basics.
import { expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { applyJsonPatch, jsonMergePatch, strategicMergePatch } from './patch.ts';
import { builtinSchema } from './schema.ts';

const pod = builtinSchema('V1Pod');
const deploy = builtinSchema('V1Deployment');
const base = {
  metadata: { finalizers: ['a', 'b'], labels: { x: '1' } },
  spec: {
    containers: [
      {
        name: 'a',
        image: 'a:1',
        env: [
          { name: 'E1', value: '1' },
          { name: 'E2', value: '2' },
        ],
        ports: [{ containerPort: 80 }],
      },
      { name: 'b', image: 'b:1' },
    ],
    volumes: [{ name: 'v', emptyDir: {} }],
    tolerations: [{ key: 't1' }],
  },
};

it('merges lists by their merge keys and replaces lists without one', () => {
  const out: any = strategicMergePatch(
    base,
    {
      spec: {
        containers: [
          { name: 'b', image: 'b:2' },
          { name: 'c', image: 'c:1' },
        ],
        tolerations: [{ key: 't2' }],
      },
    },
    pod,
  );
  expect(out.spec.containers.map((c: any) => `${c.name}=${c.image}`)).toEqual(['a=a:1', 'b=b:2', 'c=c:1']);
  expect(out.spec.containers[0].env).toHaveLength(2);
  expect(out.spec.tolerations).toEqual([{ key: 't2' }]);
  expect(base.spec.containers[1].image).toBe('b:1');
});

it('honours $patch: delete/replace, $setElementOrder, $deleteFromPrimitiveList, $retainKeys and null', () => {
  const out: any = strategicMergePatch(
    base,
    {
      metadata: { labels: { x: null, y: '2' }, '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
        containers: [{ name: 'a', env: [{ name: 'E1', $patch: 'delete' }] }],
        volumes: [{ $patch: 'replace' }, { name: 'w', configMap: { name: 'cm' } }],
      },
    },
    pod,
  );
  expect(out.metadata.labels).toEqual({ y: '2' });
  expect(out.metadata.finalizers).toEqual(['b']);
  expect(out.spec.containers.map((c: any) => c.name)).toEqual(['b', 'a']);
  expect(out.spec.containers[1].env).toEqual([{ name: 'E2', value: '2' }]);
  expect(out.spec.volumes).toEqual([{ name: 'w', configMap: { name: 'cm' } }]);
  const d: any = strategicMergePatch(
    { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
    { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
    deploy,
  );
  expect(d.spec.strategy).toEqual({ type: 'Recreate' });
});

it('merge patch and JSON patch', () => {
  expect(jsonMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] })).toEqual({
    a: { c: 2, d: 3 },
    l: [3],
  });
  expect(applyJsonPatch({ a: [1] }, [{ op: 'add', path: '/a/-', value: 2 }])).toEqual({ a: [1, 2] });
  expect(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).toThrow(ApiError);
  expect(() => applyJsonPatch({}, { op: 'add' })).toThrow(/JSON array/);
});
