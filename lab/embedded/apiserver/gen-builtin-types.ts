// Regenerates builtin-types.json, the field/type table of the built-in kinds that schema.ts walks, from the model
// classes @kubernetes/client-node generates from the Kubernetes OpenAPI spec. The server reads the JSON instead of
// importing client-node (which would add ~85 MB to its resident memory). builtin-types.test.ts fails when the JSON is
// stale: run `node lab/embedded/apiserver/gen-builtin-types.ts` after upgrading client-node.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';

/** Root models of the served built-in kinds (and ObjectMeta, used for custom resources' metadata). */
export const ROOTS = [
  'V1Namespace',
  'V1Pod',
  'V1Service',
  'V1Endpoints',
  'V1ConfigMap',
  'V1Secret',
  'V1ServiceAccount',
  'CoreV1Event',
  'V1Node',
  'V1Deployment',
  'V1ReplicaSet',
  'V1EndpointSlice',
  'V1Lease',
  'V1Role',
  'V1RoleBinding',
  'V1ClusterRole',
  'V1ClusterRoleBinding',
  'V1CustomResourceDefinition',
  'V1ValidatingAdmissionPolicy',
  'V1ValidatingAdmissionPolicyBinding',
  'V1ObjectMeta',
];

/** Model → its fields as [JSON name, client-node type expression, OpenAPI format]. */
export type TypeTable = Record<string, [string, string, string][]>;

export function generate(): TypeTable {
  const out: TypeTable = {};
  const visit = (type: string) => {
    const m = /^Array<(.+)>$/.exec(type) ?? /^\{ \[key: string\]: (.+); \}$/.exec(type);
    if (m) return visit(m[1]);
    if (out[type]) return;
    const attrs = (k8s as Record<string, any>)[type]?.getAttributeTypeMap?.() as
      | { baseName: string; type: string; format?: string }[]
      | undefined;
    if (!Array.isArray(attrs)) return;
    out[type] = attrs.map((a) => [a.baseName, a.type, a.format ?? '']);
    for (const a of attrs) visit(a.type);
  };
  for (const r of ROOTS) visit(r);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

if (import.meta.main) {
  const file = join(import.meta.dirname, 'builtin-types.json');
  writeFileSync(file, `${JSON.stringify(generate())}\n`);
  process.stdout.write(`wrote ${file}\n`);
}
