// builtin-types.json must match @kubernetes/client-node's generated models (regenerate with gen-builtin-types.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { generate } from './gen-builtin-types.ts';
import { builtinSchema, unknownFields } from './schema.ts';

it('builtin-types.json is up to date with client-node', () => {
  const committed = JSON.parse(readFileSync(join(import.meta.dirname, 'builtin-types.json'), 'utf8'));
  expect(committed).toEqual(generate());
});

it('finds unknown fields at any depth, including inside lists and maps', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'x', labels: { a: 'b' }, bogus: 1 },
    spec: {
      containers: [
        { name: 'c', image: 'i', ports: [{ containerPort: 1, nope: 2 }], resources: { limits: { cpu: '1' } } },
      ],
      extra: true,
    },
  };
  expect(unknownFields(builtinSchema('V1Pod'), pod).sort()).toEqual([
    'metadata.bogus',
    'spec.containers[0].ports[0].nope',
    'spec.extra',
  ]);
});
