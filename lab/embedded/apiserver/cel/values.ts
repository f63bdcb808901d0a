// JSON → CEL values, driven by the OpenAPI schema, as kube-apiserver maps unstructured objects into CEL
// (k8s.io/apiserver/pkg/cel/common/values.go and model/schemas.go, Kubernetes 1.32):
// - `type: integer` → int, `type: number` → double (even when the JSON has no fraction), string, bool, null;
// - `x-kubernetes-int-or-string` → int or string (dyn); `x-kubernetes-preserve-unknown-fields` without a structure →
//   dyn (JSON integers → int, other numbers → double);
// - an object with `properties` → an object whose fields are the properties, named as escaping.ts escapes them
//   (`namespace` → `__namespace__`); `additionalProperties` → map(string, V) with the raw keys;
// - `format: date-time` strings → timestamp, `format: duration` → duration, `format: byte` → bytes (as kube does);
// - lists keep their `x-kubernetes-list-type`: `set` lists compare equal regardless of order and `map` lists compare
//   by their keyed entries (equality.ts), as kube's unstructuredList.Equal does.
// Values are converted lazily, on first access, and cached: a rule on `spec.rules` does not pay for converting the
// rest of the object, and a large object costs only what the rules read.
import type { CelValue } from '@bufbuild/cel';
import type { JSONSchemaProps } from '../json-schema.ts';
import { escapeProperty } from './escaping.ts';
import { durationValue, timestampValue } from './time.ts';

const MAP = Symbol.for('@bufbuild/cel/map');
const LIST = Symbol.for('@bufbuild/cel/list');

type Key = bigint | string | boolean | number | { value: bigint };

/** Field name (CEL) → property name (JSON) of an object schema, computed once per schema node. */
const fieldNames = new WeakMap<JSONSchemaProps, Map<string, string>>();
function celFields(s: JSONSchemaProps): Map<string, string> {
  let m = fieldNames.get(s);
  if (!m) {
    m = new Map();
    for (const p of Object.keys(s.properties ?? {})) {
      const e = escapeProperty(p);
      if (e !== undefined) m.set(e, p);
    }
    fieldNames.set(s, m);
  }
  return m;
}

/** A JSON object as a CEL object/map: `names` maps CEL keys to JSON keys (undefined: keys as they are). */
export class ObjectValue implements ReadonlyMap<Key, CelValue> {
  readonly [MAP] = {};
  /** Converted values by JSON key, made on first access (most objects are read by a few rules, or none). */
  private cache?: Map<string, CelValue>;
  readonly json: Record<string, unknown>;
  /** Schema of each present key. */
  private readonly schemaOf: (jsonKey: string) => JSONSchemaProps | undefined;
  private readonly names?: Map<string, string>;
  private readonly dynamic: boolean;
  constructor(
    json: Record<string, unknown>,
    schemaOf: (jsonKey: string) => JSONSchemaProps | undefined,
    names?: Map<string, string>,
    dynamic = false,
  ) {
    this.json = json;
    this.schemaOf = schemaOf;
    this.names = names;
    this.dynamic = dynamic;
  }
  private jsonKey(k: Key): string | undefined {
    if (typeof k !== 'string') return undefined;
    if (!this.names) return Object.hasOwn(this.json, k) ? k : undefined;
    const j = this.names.get(k);
    return j !== undefined && Object.hasOwn(this.json, j) ? j : undefined;
  }
  get size(): number {
    let n = 0;
    for (const _ of this.keys()) n++;
    return n;
  }
  has(k: Key): boolean {
    const j = this.jsonKey(k);
    return j !== undefined && this.json[j] !== undefined;
  }
  get(k: Key): CelValue | undefined {
    const j = this.jsonKey(k);
    if (j === undefined || this.json[j] === undefined) return undefined;
    let v = this.cache?.get(j);
    if (v === undefined) {
      v = this.dynamic ? dynValue(this.json[j]) : toCel(this.schemaOf(j), this.json[j]);
      this.cache ??= new Map();
      this.cache.set(j, v);
    }
    return v;
  }
  *keys(): MapIterator<Key> {
    if (!this.names) {
      for (const k of Object.keys(this.json)) if (this.json[k] !== undefined) yield k;
      return;
    }
    for (const [c, j] of this.names) if (this.json[j] !== undefined) yield c;
  }
  *values(): MapIterator<CelValue> {
    for (const k of this.keys()) yield this.get(k) as CelValue;
  }
  *entries(): MapIterator<[Key, CelValue]> {
    for (const k of this.keys()) yield [k, this.get(k) as CelValue];
  }
  [Symbol.iterator](): MapIterator<[Key, CelValue]> {
    return this.entries();
  }
  forEach(cb: (v: CelValue, k: Key, m: ReadonlyMap<Key, CelValue>) => void): void {
    for (const [k, v] of this.entries()) cb(v, k, this);
  }
}

/** A JSON array as a CEL list, with its list type (atomic, set or map and its keys). */
export class ListValue {
  readonly [LIST] = {};
  private cache?: (CelValue | undefined)[];
  readonly json: unknown[];
  readonly item: JSONSchemaProps | undefined;
  readonly listType: 'atomic' | 'set' | 'map';
  readonly mapKeys: string[];
  private readonly dynamic: boolean;
  constructor(
    json: unknown[],
    item: JSONSchemaProps | undefined,
    listType: 'atomic' | 'set' | 'map' = 'atomic',
    mapKeys: string[] = [],
    dynamic = false,
  ) {
    this.json = json;
    this.item = item;
    this.listType = listType;
    this.mapKeys = mapKeys;
    this.dynamic = dynamic;
  }
  get size(): number {
    return this.json.length;
  }
  get(i: number): CelValue | undefined {
    if (i < 0 || i >= this.json.length) return undefined;
    let v = this.cache?.[i];
    if (v === undefined) {
      v = this.dynamic ? dynValue(this.json[i]) : toCel(this.item, this.json[i]);
      this.cache ??= [];
      this.cache[i] = v;
    }
    return v;
  }
  *values(): IterableIterator<CelValue> {
    for (let i = 0; i < this.json.length; i++) yield this.get(i) as CelValue;
  }
  [Symbol.iterator](): IterableIterator<CelValue> {
    return this.values();
  }
}

/** A JSON value without a schema (preserve-unknown-fields): integers → int, other numbers → double. */
export function dynValue(v: unknown): CelValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return new ListValue(v, undefined, 'atomic', [], true) as unknown as CelValue;
  return new ObjectValue(v as Record<string, unknown>, () => undefined, undefined, true) as unknown as CelValue;
}

/** The CEL value of a JSON value under its schema. */
export function toCel(s: JSONSchemaProps | undefined, v: unknown): CelValue {
  if (v === null || v === undefined) return null;
  if (!s) return dynValue(v);
  if (s['x-kubernetes-int-or-string']) return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : dynValue(v);
  switch (s.type) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : dynValue(v);
    case 'number':
      return typeof v === 'number' ? v : dynValue(v);
    case 'string':
      if (typeof v !== 'string') return dynValue(v);
      if (s.format === 'date-time') return timestampValue(v) ?? v;
      if (s.format === 'duration') return durationValue(v) ?? v;
      if (s.format === 'byte') return Buffer.from(v, 'base64');
      return v;
    case 'array': {
      if (!Array.isArray(v)) return dynValue(v);
      const lt = s['x-kubernetes-list-type'] ?? 'atomic';
      return new ListValue(v, s.items, lt, s['x-kubernetes-list-map-keys'] ?? []) as unknown as CelValue;
    }
    default:
      break;
  }
  if (typeof v !== 'object' || Array.isArray(v)) return dynValue(v);
  const o = v as Record<string, unknown>;
  if (s.properties) {
    const props = s.properties;
    return new ObjectValue(o, (k) => props[k], celFields(s)) as unknown as CelValue;
  }
  if (typeof s.additionalProperties === 'object') {
    const addl = s.additionalProperties;
    return new ObjectValue(o, () => addl) as unknown as CelValue;
  }
  return dynValue(v);
}

/** The root of a custom resource: its schema plus apiVersion, kind and metadata.name/generateName (kube's
 * model.WithTypeAndObjectMeta). */
const roots = new WeakMap<JSONSchemaProps, JSONSchemaProps>();
export function rootSchema(s: JSONSchemaProps): JSONSchemaProps {
  let r = roots.get(s);
  if (!r) {
    r = makeRoot(s);
    roots.set(s, r);
  }
  return r;
}

function makeRoot(s: JSONSchemaProps): JSONSchemaProps {
  const str: JSONSchemaProps = { type: 'string' };
  return {
    ...s,
    type: 'object',
    properties: {
      ...s.properties,
      apiVersion: str,
      kind: str,
      metadata: { type: 'object', properties: { name: str, generateName: str } },
    },
  };
}
