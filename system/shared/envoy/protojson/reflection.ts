// What both directions of the proto3 JSON mapping share (from-json.ts parses, to-json.ts prints): the error that
// names the JSON path, the printing options, the well-known types with a JSON form of their own, and the field lookup
// by proto name or JSON (camelCase) name over protobufjs' reflection, cached per type.
import type protobuf from 'protobufjs';

export class ProtoJsonError extends Error {
  /** The JSON path of the offending value, e.g. `static_resources.listeners[0].address.socket_address.port_value`. */
  readonly path: string;
  /** The problem without the path. */
  readonly problem: string;
  constructor(path: string, problem: string) {
    super(`${path === '' ? '<root>' : path}: ${problem}`);
    this.name = 'ProtoJsonError';
    this.path = path;
    this.problem = problem;
  }
}

export interface ToJsonOptions {
  /**
   * What to do with an Any whose type is not among the Envoy protos: throw (default) or print it as
   * `{"@type": url, "value": "<base64>"}` so a dump of foreign configuration still shows something.
   */
  unknownAny?: 'throw' | 'raw';
  /**
   * Print scalar, enum and repeated fields that hold their default value too (protobuf's
   * always_print_primitive_fields), as Envoy's /server_info does. Unset message fields stay out.
   */
  emitDefaults?: boolean;
}

export type JsonObject = Record<string, unknown>;

export const WKT = {
  any: '.google.protobuf.Any',
  duration: '.google.protobuf.Duration',
  timestamp: '.google.protobuf.Timestamp',
  fieldMask: '.google.protobuf.FieldMask',
  struct: '.google.protobuf.Struct',
  value: '.google.protobuf.Value',
  listValue: '.google.protobuf.ListValue',
  empty: '.google.protobuf.Empty',
} as const;

export const WRAPPERS = new Set([
  '.google.protobuf.DoubleValue',
  '.google.protobuf.FloatValue',
  '.google.protobuf.Int64Value',
  '.google.protobuf.UInt64Value',
  '.google.protobuf.Int32Value',
  '.google.protobuf.UInt32Value',
  '.google.protobuf.BoolValue',
  '.google.protobuf.StringValue',
  '.google.protobuf.BytesValue',
]);

/** Types whose JSON form is not an object of fields; inside an Any they travel under `"value"`. */
export function hasSpecialJson(fullName: string): boolean {
  return (
    WRAPPERS.has(fullName) ||
    fullName === WKT.duration ||
    fullName === WKT.timestamp ||
    fullName === WKT.fieldMask ||
    fullName === WKT.struct ||
    fullName === WKT.value ||
    fullName === WKT.listValue ||
    fullName === WKT.any
  );
}

export const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

// ---------------------------------------------------------------------------------------------------------------
// Field lookup by proto name or JSON (camelCase) name.

const fullNames = new WeakMap<protobuf.ReflectionObject, string>();

/** protobufjs computes fullName by walking the parents on every read; the hot paths read it once per type. */
export function fullNameOf(t: protobuf.ReflectionObject): string {
  let n = fullNames.get(t);
  if (n === undefined) {
    n = t.fullName;
    fullNames.set(t, n);
  }
  return n;
}

const fieldIndex = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

export function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

export function fieldsOf(type: protobuf.Type): Map<string, protobuf.Field> {
  let idx = fieldIndex.get(type);
  if (idx) return idx;
  idx = new Map();
  for (const f of type.fieldsArray) {
    idx.set(f.name, f);
    const jsonName = (f.options?.json_name as string | undefined) ?? lowerCamel(f.name);
    if (!idx.has(jsonName)) idx.set(jsonName, f);
  }
  fieldIndex.set(type, idx);
  return idx;
}

const byNumber = new WeakMap<protobuf.Type, protobuf.Field[]>();

/** Fields in field-number order, the order protobuf's JSON printer (and so Envoy's config_dump) uses. */
export function fieldsByNumber(type: protobuf.Type): protobuf.Field[] {
  let list = byNumber.get(type);
  if (!list) {
    list = [...type.fieldsArray].sort((a, b) => a.id - b.id);
    byNumber.set(type, list);
  }
  return list;
}

export function fieldById(type: protobuf.Type, id: number): protobuf.Field {
  const f = type.fieldsById[id];
  if (!f) throw new Error(`${type.fullName} has no field ${id}`);
  return f;
}

export function resolvedTypeOf(field: protobuf.Field): protobuf.Type | protobuf.Enum | null {
  if (!field.resolved) field.resolve();
  return field.resolvedType as protobuf.Type | protobuf.Enum | null;
}

export function typeName(type: protobuf.Type): string {
  return type.fullName.replace(/^\./, '');
}

export function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}
