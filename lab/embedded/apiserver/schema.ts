// A small structural view over object schemas, shared by strict field validation, strategic merge patch and
// server-side apply. Two sources implement it:
// - built-in kinds: the attribute type maps that @kubernetes/client-node generates from the Kubernetes OpenAPI spec
//   (every model class lists its JSON field names and their types), extracted into builtin-types.json by
//   gen-builtin-types.ts, plus the list semantics (patch merge keys and list-map keys) that the generated models do
//   not carry, written out below from the Kubernetes API types;
// - custom resources: the CRD's structural openAPIV3Schema (crd.ts).
// kubernetes-models' validators (used in validation.ts) check types and required fields, but they accept unknown
// fields (their schemas have no additionalProperties: false), so unknown-field detection walks this tree instead.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ListSemantics =
  | { type: 'atomic' }
  | { type: 'set' }
  /** `keys`: the list-map keys (server-side apply); `mergeKey`: the strategic-merge-patch key (the first one). */
  | { type: 'map'; keys: string[]; mergeKey: string; retainKeys?: boolean };

export interface SchemaNode {
  /** 'object' (known fields), 'map' (string keys → values), 'list', 'scalar', 'any' (unknown structure). */
  kind: 'object' | 'map' | 'list' | 'scalar' | 'any';
  /** Child schema of a field (objects) or a value (maps); undefined = unknown field. */
  field(name: string): SchemaNode | undefined;
  /** Item schema of a list. */
  item(): SchemaNode;
  /** List semantics of this list node. */
  list(): ListSemantics;
  /** Objects: whether unknown fields are kept (x-kubernetes-preserve-unknown-fields). */
  preserveUnknown?: boolean;
}

const ANY: SchemaNode = {
  kind: 'any',
  field: () => ANY,
  item: () => ANY,
  list: () => ({ type: 'atomic' }),
};
export const anySchema = ANY;

const SCALAR: SchemaNode = {
  kind: 'scalar',
  field: () => undefined,
  item: () => ANY,
  list: () => ({ type: 'atomic' }),
};

/** Patch strategies of the built-in types: `Model.field` → list semantics (from the Kubernetes API Go types). */
const LISTS: Record<string, ListSemantics> = {};
function lm(paths: string[], keys: string[], retainKeys = false) {
  for (const p of paths) LISTS[p] = { type: 'map', keys, mergeKey: keys[0], retainKeys };
}
function ls(paths: string[]) {
  for (const p of paths) LISTS[p] = { type: 'set' };
}
lm(['V1PodSpec.containers', 'V1PodSpec.initContainers', 'V1PodSpec.ephemeralContainers'], ['name']);
lm(['V1PodSpec.volumes', 'V1PodSpec.resourceClaims'], ['name'], true);
lm(['V1PodSpec.imagePullSecrets', 'V1PodSpec.schedulingGates'], ['name']);
lm(['V1PodSpec.hostAliases'], ['ip']);
lm(['V1PodSpec.topologySpreadConstraints'], ['topologyKey', 'whenUnsatisfiable']);
for (const c of ['V1Container', 'V1EphemeralContainer']) {
  lm([`${c}.ports`], ['containerPort', 'protocol']);
  lm([`${c}.env`], ['name']);
  lm([`${c}.volumeMounts`], ['mountPath']);
  lm([`${c}.volumeDevices`], ['devicePath']);
}
lm(['V1ObjectMeta.ownerReferences'], ['uid']);
ls(['V1ObjectMeta.finalizers', 'V1NodeSpec.podCIDRs']);
lm(['V1ServiceSpec.ports'], ['port', 'protocol']);
lm(
  [
    'V1PodStatus.conditions',
    'V1NodeStatus.conditions',
    'V1DeploymentStatus.conditions',
    'V1ReplicaSetStatus.conditions',
    'V1NamespaceStatus.conditions',
    'V1ServiceStatus.conditions',
    'V1CustomResourceDefinitionStatus.conditions',
  ],
  ['type'],
);
lm(['V1PodStatus.podIPs', 'V1PodStatus.hostIPs'], ['ip']);
lm(['V1NodeStatus.addresses'], ['type']);
lm(['V1ServiceAccount.secrets'], ['name']);
// k8s.io/api/admissionregistration/v1 types.go: matchConditions are `listType=map, listMapKey=name`, status
// conditions `listType=map, listMapKey=type`; validations, variables and rules are atomic.
lm(['V1ValidatingAdmissionPolicySpec.matchConditions'], ['name']);
lm(['V1ValidatingAdmissionPolicyStatus.conditions'], ['type']);

type Attr = { baseName: string; type: string };

let table: Record<string, [string, string, string][]> | undefined;

/** builtin-types.json: model → [JSON name, type expression, format][] (see gen-builtin-types.ts). */
export function builtinTypeTable(): Record<string, [string, string, string][]> {
  table ??= JSON.parse(readFileSync(join(import.meta.dirname, 'builtin-types.json'), 'utf8')) as Record<
    string,
    [string, string, string][]
  >;
  return table;
}

function modelAttrs(model: string): Attr[] | undefined {
  return builtinTypeTable()[model]?.map(([baseName, type]) => ({ baseName, type }));
}

const cache = new Map<string, SchemaNode>();

/** The schema of a client-node type expression (`V1Pod`, `Array<V1Container>`, `{ [key: string]: string; }`). */
export function builtinSchema(type: string, owner?: string): SchemaNode {
  const key = `${owner ?? ''}|${type}`;
  let n = cache.get(key);
  if (n) return n;
  n = makeNode(type, owner);
  cache.set(key, n);
  return n;
}

function makeNode(type: string, owner?: string): SchemaNode {
  let m = /^Array<(.+)>$/.exec(type);
  if (m) {
    const itemType = m[1];
    const sem: ListSemantics = (owner && LISTS[owner]) || { type: 'atomic' };
    return { kind: 'list', field: () => undefined, item: () => builtinSchema(itemType), list: () => sem };
  }
  m = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (m) {
    const valueType = m[1];
    return { kind: 'map', field: () => builtinSchema(valueType), item: () => ANY, list: () => ({ type: 'atomic' }) };
  }
  if (['string', 'number', 'boolean', 'Date', 'IntOrString'].includes(type)) return SCALAR;
  if (type === 'any' || type === 'object') return ANY;
  const attrs = modelAttrs(type);
  if (!attrs) return ANY;
  const fields = new Map(attrs.map((a) => [a.baseName, a]));
  return {
    kind: 'object',
    field: (name) => {
      const a = fields.get(name);
      return a ? builtinSchema(a.type, `${type}.${a.baseName}`) : undefined;
    },
    item: () => ANY,
    list: () => ({ type: 'atomic' }),
  };
}

/** Paths (`spec.template.spec.containers[0].foo`) of fields the schema does not declare. */
export function unknownFields(schema: SchemaNode, value: unknown, path = ''): string[] {
  const out: string[] = [];
  walk(schema, value, path, out);
  return out;
}

function walk(s: SchemaNode, v: unknown, path: string, out: string[]): void {
  if (v === null || v === undefined || s.kind === 'any' || s.kind === 'scalar') return;
  if (s.kind === 'list') {
    if (!Array.isArray(v)) return;
    const it = s.item();
    v.forEach((x, i) => {
      walk(it, x, `${path}[${i}]`, out);
    });
    return;
  }
  if (typeof v !== 'object' || Array.isArray(v)) return;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const child = s.field(k);
    const p = s.kind === 'map' ? `${path}[${k}]` : path ? `${path}.${k}` : k;
    if (!child) {
      if (!s.preserveUnknown) out.push(p);
      continue;
    }
    walk(child, x, p, out);
  }
}

/** Removes fields the schema does not declare (non-strict field validation drops them, as Kubernetes' decoder does). */
export function dropUnknown(schema: SchemaNode, value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  if (schema.kind === 'list') {
    if (Array.isArray(value)) for (const x of value) dropUnknown(schema.item(), x);
    return;
  }
  if (schema.kind !== 'object' && schema.kind !== 'map') return;
  if (Array.isArray(value)) return;
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const c = schema.field(k);
    if (!c) {
      if (!schema.preserveUnknown) delete o[k];
    } else dropUnknown(c, o[k]);
  }
}
