// Envoy-style proto3 JSON for the Envoy protos: snake_case field names (camelCase accepted on input, as Envoy does),
// `"@type"` on Any, Duration `"1.5s"`, Timestamp RFC 3339, enums by name, 64-bit integers as strings, wrappers
// unwrapped, Struct/Value as plain JSON, FieldMask as a comma-separated string. protobufjs' own fromObject/toObject do
// not implement these well-known-type rules, so this module walks the reflection itself. Errors name the JSON path.
import protobuf from 'protobufjs';
import { findType, lookupType, typeNameOf, typeUrlOf } from './protos.ts';

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

const WKT = {
  any: '.google.protobuf.Any',
  duration: '.google.protobuf.Duration',
  timestamp: '.google.protobuf.Timestamp',
  fieldMask: '.google.protobuf.FieldMask',
  struct: '.google.protobuf.Struct',
  value: '.google.protobuf.Value',
  listValue: '.google.protobuf.ListValue',
  empty: '.google.protobuf.Empty',
} as const;

const WRAPPERS = new Set([
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
function hasSpecialJson(fullName: string): boolean {
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

const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32_RANGE: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  sint32: [-2147483648, 2147483647],
  sfixed32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  fixed32: [0, 4294967295],
};
const MAX_DURATION_SECONDS = 315576000000;

// ---------------------------------------------------------------------------------------------------------------
// Field lookup by proto name or JSON (camelCase) name.

const fullNames = new WeakMap<protobuf.ReflectionObject, string>();

/** protobufjs computes fullName by walking the parents on every read; the hot paths read it once per type. */
function fullNameOf(t: protobuf.ReflectionObject): string {
  let n = fullNames.get(t);
  if (n === undefined) {
    n = t.fullName;
    fullNames.set(t, n);
  }
  return n;
}

const fieldIndex = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

function fieldsOf(type: protobuf.Type): Map<string, protobuf.Field> {
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
function fieldsByNumber(type: protobuf.Type): protobuf.Field[] {
  let list = byNumber.get(type);
  if (!list) {
    list = [...type.fieldsArray].sort((a, b) => a.id - b.id);
    byNumber.set(type, list);
  }
  return list;
}

function fieldById(type: protobuf.Type, id: number): protobuf.Field {
  const f = type.fieldsById[id];
  if (!f) throw new Error(`${type.fullName} has no field ${id}`);
  return f;
}

function resolvedTypeOf(field: protobuf.Field): protobuf.Type | protobuf.Enum | null {
  if (!field.resolved) field.resolve();
  return field.resolvedType as protobuf.Type | protobuf.Enum | null;
}

function typeName(type: protobuf.Type): string {
  return type.fullName.replace(/^\./, '');
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON → message

/** Parses Envoy-style JSON (or YAML already parsed to JSON values) into a message of `typeName`. */
export function fromJson(typeName: string, json: unknown): protobuf.Message {
  const type = lookupType(typeName);
  return type.fromObject(messageObject(type, json, ''));
}

/** Returns the protobufjs plain-object form (what Type.fromObject takes) for one message value. */
function messageObject(type: protobuf.Type, json: unknown, path: string): JsonObject {
  const special = wellKnownObject(type, json, path);
  if (special !== undefined) return special;
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new ProtoJsonError(path, `expected an object for ${typeName(type)}, got ${describe(json)}`);
  }
  const out: JsonObject = {};
  const fields = fieldsOf(type);
  const seenOneofs = new Map<string, string>();
  const seenFields = new Map<string, string>();
  for (const [key, value] of Object.entries(json as JsonObject)) {
    const here = join(path, key);
    const field = fields.get(key);
    if (!field) throw new ProtoJsonError(here, `unknown field "${key}" in ${typeName(type)}`);
    const earlier = seenFields.get(field.name);
    if (earlier !== undefined) {
      throw new ProtoJsonError(here, `field "${field.name}" is set twice (as "${earlier}" and "${key}")`);
    }
    seenFields.set(field.name, key);
    if (value === null && !isValueField(field)) continue; // null means "not set" for every field but Value
    const oneof = field.partOf;
    if (oneof && !isSyntheticOneof(oneof)) {
      const other = seenOneofs.get(oneof.name);
      if (other !== undefined) {
        throw new ProtoJsonError(
          here,
          `oneof "${oneof.name}" of ${typeName(type)} already has "${other}" set; only one of ${oneof.oneof.map((n) => `"${n}"`).join(', ')} may be given`,
        );
      }
      seenOneofs.set(oneof.name, key);
    }
    out[field.name] = fieldValue(field, value, here);
  }
  return out;
}

function isSyntheticOneof(oneof: protobuf.OneOf): boolean {
  // proto3 `optional` fields get a one-member oneof named `_<field>`.
  return oneof.oneof.length === 1 && oneof.name === `_${oneof.oneof[0]}`;
}

function isValueField(field: protobuf.Field): boolean {
  const t = resolvedTypeOf(field);
  return t instanceof protobuf.Type && fullNameOf(t) === WKT.value && !field.repeated && !field.map;
}

function fieldValue(field: protobuf.Field, value: unknown, path: string): unknown {
  if (field.map) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ProtoJsonError(path, `expected an object (map) for field "${field.name}", got ${describe(value)}`);
    }
    const out: JsonObject = {};
    const keyType = (field as unknown as protobuf.MapField).keyType;
    for (const [k, v] of Object.entries(value as JsonObject)) {
      const here = `${path}[${JSON.stringify(k)}]`;
      checkMapKey(keyType, k, here);
      out[k] = singleValue(field, v, here);
    }
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) {
      throw new ProtoJsonError(path, `expected an array for repeated field "${field.name}", got ${describe(value)}`);
    }
    return value.map((v, i) => {
      const here = `${path}[${i}]`;
      if (v === null && !isValueType(field)) throw new ProtoJsonError(here, 'null is not allowed in a repeated field');
      return singleValue(field, v, here);
    });
  }
  return singleValue(field, value, path);
}

function isValueType(field: protobuf.Field): boolean {
  const t = resolvedTypeOf(field);
  return t instanceof protobuf.Type && fullNameOf(t) === WKT.value;
}

function checkMapKey(keyType: string, key: string, path: string): void {
  if (keyType === 'string') return;
  if (keyType === 'bool') {
    if (key !== 'true' && key !== 'false') throw new ProtoJsonError(path, `map key must be true or false`);
    return;
  }
  scalarValue(keyType, key, path);
}

function singleValue(field: protobuf.Field, value: unknown, path: string): unknown {
  const resolved = resolvedTypeOf(field);
  if (resolved instanceof protobuf.Type) return messageObject(resolved, value, path);
  if (resolved instanceof protobuf.Enum) return enumValue(resolved, value, path);
  return scalarValue(field.type, value, path);
}

function enumValue(en: protobuf.Enum, value: unknown, path: string): number {
  if (fullNameOf(en) === '.google.protobuf.NullValue' && value === null) return 0;
  if (typeof value === 'string') {
    const n = en.values[value];
    if (n === undefined) {
      const names = Object.keys(en.values);
      const shown = names.length <= 12 ? `: one of ${names.join(', ')}` : '';
      throw new ProtoJsonError(path, `unknown value ${JSON.stringify(value)} for enum ${en.fullName.slice(1)}${shown}`);
    }
    return n;
  }
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new ProtoJsonError(path, `expected an enum name (string) for ${en.fullName.slice(1)}, got ${describe(value)}`);
}

function scalarValue(kind: string, value: unknown, path: string): unknown {
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw new ProtoJsonError(path, `expected a string, got ${describe(value)}`);
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw new ProtoJsonError(path, `expected true or false, got ${describe(value)}`);
      return value;
    case 'bytes':
      if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) {
        throw new ProtoJsonError(path, `expected base64-encoded bytes (a string), got ${describe(value)}`);
      }
      return Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    case 'double':
    case 'float':
      return floatValue(kind, value, path);
    default:
      if (INT64_TYPES.has(kind)) return int64Value(kind, value, path);
      if (kind in INT32_RANGE) return int32Value(kind, value, path);
      throw new ProtoJsonError(path, `unsupported scalar type ${kind}`);
  }
}

function floatValue(kind: string, value: unknown, path: string): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return Number.NaN;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (typeof value === 'string' && /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value)) return Number(value);
  throw new ProtoJsonError(path, `expected a number (${kind}), got ${describe(value)}`);
}

function integerText(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || !Number.isInteger(value)) return undefined;
    return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    if (/^-?\d+$/.test(value)) return value;
    // proto3 JSON allows exponent notation when the value is integral ("1e3").
    if (/^-?\d+(\.\d+)?[eE]\+?\d+$/.test(value)) {
      const n = Number(value);
      if (Number.isSafeInteger(n)) return String(n);
    }
  }
  return undefined;
}

function int32Value(kind: string, value: unknown, path: string): number {
  const text = integerText(value);
  if (text === undefined) throw new ProtoJsonError(path, `expected an integer (${kind}), got ${describe(value)}`);
  const [min, max] = INT32_RANGE[kind]!;
  const n = Number(text);
  if (n < min || n > max) throw new ProtoJsonError(path, `${text} is out of range for ${kind} (${min}..${max})`);
  return n;
}

function int64Value(kind: string, value: unknown, path: string): string {
  const text = integerText(value);
  if (text === undefined) {
    throw new ProtoJsonError(
      path,
      `expected an integer (${kind}, a number or a decimal string), got ${describe(value)}`,
    );
  }
  const n = BigInt(text);
  const unsigned = kind === 'uint64' || kind === 'fixed64';
  const [min, max] = unsigned ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
  if (n < min || n > max) throw new ProtoJsonError(path, `${text} is out of range for ${kind}`);
  return text;
}

/** Well-known types with their own JSON form; undefined for ordinary messages. */
function wellKnownObject(type: protobuf.Type, json: unknown, path: string): JsonObject | undefined {
  const name = fullNameOf(type);
  if (WRAPPERS.has(name)) {
    const inner = fieldById(type, 1);
    if (json !== null && typeof json === 'object') {
      throw new ProtoJsonError(path, `expected a bare ${inner.type} for ${typeName(type)}, got ${describe(json)}`);
    }
    return { [inner.name]: scalarValue(inner.type, json, path) };
  }
  switch (name) {
    case WKT.duration:
      return parseDuration(json, path);
    case WKT.timestamp:
      return parseTimestamp(json, path);
    case WKT.fieldMask: {
      if (typeof json !== 'string')
        throw new ProtoJsonError(path, `expected a field mask string, got ${describe(json)}`);
      const paths = json === '' ? [] : json.split(',').map((p) => p.split('.').map(camelToSnake).join('.'));
      return { [fieldById(type, 1).name]: paths };
    }
    case WKT.struct:
      return structObject(type, json, path);
    case WKT.value:
      return valueObject(type, json, path);
    case WKT.listValue:
      return listObject(type, json, path);
    case WKT.any:
      return anyObject(json, path);
    case WKT.empty:
      if (json === null || typeof json !== 'object' || Array.isArray(json) || Object.keys(json).length > 0) {
        throw new ProtoJsonError(path, `expected an empty object for google.protobuf.Empty, got ${describe(json)}`);
      }
      return {};
    default:
      return undefined;
  }
}

function parseDuration(json: unknown, path: string): JsonObject {
  const m = typeof json === 'string' ? /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(json) : null;
  if (!m) {
    throw new ProtoJsonError(path, `invalid duration ${describe(json)}: expected a string such as "1.5s" or "15s"`);
  }
  const seconds = Number(m[2]);
  if (seconds > MAX_DURATION_SECONDS) throw new ProtoJsonError(path, `duration ${json} is out of range`);
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) : 0;
  const sign = m[1] ? -1 : 1;
  return { seconds: String(sign * seconds), nanos: sign * nanos || 0 };
}

function parseTimestamp(json: unknown, path: string): JsonObject {
  const m =
    typeof json === 'string'
      ? /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/.exec(json)
      : null;
  if (!m) {
    throw new ProtoJsonError(
      path,
      `invalid timestamp ${describe(json)}: expected RFC 3339 such as "2024-01-02T03:04:05.678Z"`,
    );
  }
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(ms);
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59 ||
    Number(y) < 1
  ) {
    throw new ProtoJsonError(path, `invalid timestamp ${JSON.stringify(json)}: no such date or time`);
  }
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone![0] === '-' ? -1 : 1;
    const [zh, zm] = zone!.slice(1).split(':').map(Number);
    ms -= sign * (zh! * 60 + zm!) * 60_000;
  }
  return { seconds: String(Math.floor(ms / 1000)), nanos: frac ? Number(frac.padEnd(9, '0')) : 0 };
}

function structObject(type: protobuf.Type, json: unknown, path: string): JsonObject {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new ProtoJsonError(path, `expected an object for google.protobuf.Struct, got ${describe(json)}`);
  }
  const valueType = resolvedTypeOf(fieldById(type, 1)) as protobuf.Type;
  const fields: JsonObject = {};
  for (const [k, v] of Object.entries(json as JsonObject)) fields[k] = valueObject(valueType, v, join(path, k));
  return { [fieldById(type, 1).name]: fields };
}

function listObject(type: protobuf.Type, json: unknown, path: string): JsonObject {
  if (!Array.isArray(json)) throw new ProtoJsonError(path, `expected an array for google.protobuf.ListValue`);
  const valueType = resolvedTypeOf(fieldById(type, 1)) as protobuf.Type;
  return { [fieldById(type, 1).name]: json.map((v, i) => valueObject(valueType, v, `${path}[${i}]`)) };
}

function valueObject(type: protobuf.Type, json: unknown, path: string): JsonObject {
  // Field numbers of google.protobuf.Value: 1 null, 2 number, 3 string, 4 bool, 5 struct, 6 list.
  if (json === null) return { [fieldById(type, 1).name]: 0 };
  if (typeof json === 'number') {
    if (!Number.isFinite(json)) throw new ProtoJsonError(path, 'a Value cannot hold NaN or Infinity');
    return { [fieldById(type, 2).name]: json };
  }
  if (typeof json === 'string') return { [fieldById(type, 3).name]: json };
  if (typeof json === 'boolean') return { [fieldById(type, 4).name]: json };
  if (Array.isArray(json)) {
    const listType = resolvedTypeOf(fieldById(type, 6)) as protobuf.Type;
    return { [fieldById(type, 6).name]: listObject(listType, json, path) };
  }
  if (typeof json === 'object') {
    const structType = resolvedTypeOf(fieldById(type, 5)) as protobuf.Type;
    return { [fieldById(type, 5).name]: structObject(structType, json, path) };
  }
  throw new ProtoJsonError(path, `cannot hold ${describe(json)} in a google.protobuf.Value`);
}

function anyObject(json: unknown, path: string): JsonObject {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new ProtoJsonError(path, `expected an object with "@type" for google.protobuf.Any, got ${describe(json)}`);
  }
  const { '@type': url, ...rest } = json as JsonObject;
  if (url === undefined) {
    if (Object.keys(rest).length === 0) return {};
    throw new ProtoJsonError(path, 'missing "@type" in google.protobuf.Any');
  }
  if (typeof url !== 'string' || !url.includes('/')) {
    throw new ProtoJsonError(
      join(path, '@type'),
      `expected a type URL such as "type.googleapis.com/<message name>", got ${describe(url)}`,
    );
  }
  const inner = findType(typeNameOf(url));
  if (!inner) throw new ProtoJsonError(join(path, '@type'), `unknown @type ${JSON.stringify(url)}`);
  let obj: JsonObject;
  if (hasSpecialJson(fullNameOf(inner))) {
    const extra = Object.keys(rest).filter((k) => k !== 'value');
    if (extra.length > 0) {
      throw new ProtoJsonError(
        join(path, extra[0]!),
        `unknown field "${extra[0]}": an Any of ${typeNameOf(url)} holds its JSON under "value"`,
      );
    }
    if (!('value' in rest)) throw new ProtoJsonError(path, `missing "value" in an Any of ${typeNameOf(url)}`);
    obj = messageObject(inner, rest.value, join(path, 'value'));
  } else {
    obj = messageObject(inner, rest, path);
  }
  const bytes = inner.encode(inner.fromObject(obj)).finish();
  return { type_url: url, value: bytes };
}

// ---------------------------------------------------------------------------------------------------------------
// message → JSON

/** Canonical Envoy-style JSON of a message (or of its wire bytes). Default values are left out, as Envoy does. */
export function toJson(typeName: string, msg: protobuf.Message | Uint8Array, opts: ToJsonOptions = {}): JsonObject {
  const type = lookupType(typeName);
  const m = msg instanceof Uint8Array ? type.decode(msg) : msg;
  const out = messageJson(type, m as unknown as JsonObject, '', opts);
  if (out === null || typeof out !== 'object' || Array.isArray(out)) {
    // A top-level well-known type with a scalar form (Duration, wrappers): keep the return type an object.
    return { value: out };
  }
  return out as JsonObject;
}

function messageJson(type: protobuf.Type, msg: JsonObject, path: string, opts: ToJsonOptions): unknown {
  const special = wellKnownJson(type, msg, path, opts);
  if (special !== undefined) return special;
  const out: JsonObject = {};
  for (const field of fieldsByNumber(type)) {
    const v = msg[field.name];
    if (field.map) {
      if (v == null || typeof v !== 'object') continue;
      const keys = Object.keys(v as JsonObject);
      if (keys.length === 0) continue;
      const obj: JsonObject = {};
      for (const k of keys) obj[k] = singleJson(field, (v as JsonObject)[k], path, field.name, k, opts);
      out[field.name] = obj;
    } else if (field.repeated) {
      if (!Array.isArray(v) || v.length === 0) {
        if (opts.emitDefaults && field.partOf === null) out[field.name] = [];
        continue;
      }
      const arr = new Array(v.length);
      for (let i = 0; i < v.length; i++) arr[i] = singleJson(field, v[i], path, field.name, i, opts);
      out[field.name] = arr;
    } else {
      if (v == null) continue;
      if (field.partOf !== null) {
        // oneof members and proto3 `optional` fields have presence: set means present, even with a default value.
        if (!Object.hasOwn(msg, field.name)) continue;
      } else if (!(resolvedTypeOf(field) instanceof protobuf.Type) && !opts.emitDefaults && isDefault(field, v)) {
        continue;
      }
      out[field.name] = singleJson(field, v, path, field.name, undefined, opts);
    }
  }
  return out;
}

function isDefault(field: protobuf.Field, v: unknown): boolean {
  if (v === 0 || v === '' || v === false) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (typeof v === 'object' && v !== null && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number };
    return l.low === 0 && l.high === 0;
  }
  return field.type === 'bytes' && Array.isArray(v) && v.length === 0;
}

function singleJson(
  field: protobuf.Field,
  v: unknown,
  parent: string,
  name: string,
  index: number | string | undefined,
  opts: ToJsonOptions,
): unknown {
  const resolved = resolvedTypeOf(field);
  if (resolved instanceof protobuf.Type) {
    // The JSON path is only needed by nested Any errors; build it for message values only.
    const here =
      index === undefined
        ? join(parent, name)
        : `${join(parent, name)}[${typeof index === 'string' ? JSON.stringify(index) : index}]`;
    return messageJson(resolved, v as JsonObject, here, opts);
  }
  if (resolved instanceof protobuf.Enum) {
    if (fullNameOf(resolved) === '.google.protobuf.NullValue') return null;
    return resolved.valuesById[v as number] ?? v;
  }
  return scalarJson(field.type, v);
}

function scalarJson(kind: string, v: unknown): unknown {
  if (INT64_TYPES.has(kind)) return longText(v);
  switch (kind) {
    case 'bytes':
      return Buffer.from(v as Uint8Array).toString('base64');
    case 'double':
    case 'float': {
      const n = v as number;
      if (Number.isNaN(n)) return 'NaN';
      if (n === Number.POSITIVE_INFINITY) return 'Infinity';
      if (n === Number.NEGATIVE_INFINITY) return '-Infinity';
      return kind === 'float' ? shortestFloat32(n) : n;
    }
    default:
      return v;
  }
}

/** A float32 decoded into a double (0.1f → 0.10000000149011612) printed with the fewest digits that round-trip. */
function shortestFloat32(n: number): number {
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(n.toPrecision(p));
    if (Math.fround(candidate) === Math.fround(n)) return candidate;
  }
  return n;
}

function longText(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string') return String(v);
  if (v && typeof v === 'object' && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number; unsigned?: boolean };
    const big = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
    if (!l.unsigned && l.high < 0) return (big - (1n << 64n)).toString();
    return big.toString();
  }
  return String(v);
}

function longNumber(v: unknown): bigint {
  return BigInt(longText(v ?? 0));
}

function wellKnownJson(type: protobuf.Type, msg: JsonObject, path: string, opts: ToJsonOptions): unknown {
  const name = fullNameOf(type);
  if (WRAPPERS.has(name)) {
    const f = fieldById(type, 1);
    return scalarJson(f.type, msg[f.name] ?? (f.type === 'bool' ? false : f.type === 'string' ? '' : 0));
  }
  switch (name) {
    case WKT.duration:
      return formatDuration(longNumber(msg.seconds), Number(msg.nanos ?? 0));
    case WKT.timestamp:
      return formatTimestamp(longNumber(msg.seconds), Number(msg.nanos ?? 0));
    case WKT.fieldMask: {
      const paths = (msg[fieldById(type, 1).name] as string[] | undefined) ?? [];
      return paths.map((p) => p.split('.').map(lowerCamel).join('.')).join(',');
    }
    case WKT.struct:
      return structJson(type, msg);
    case WKT.value:
      return valueJson(type, msg);
    case WKT.listValue:
      return listJson(type, msg);
    case WKT.empty:
      return {};
    case WKT.any:
      return anyJson(msg, path, opts);
    default:
      return undefined;
  }
}

/** Canonical proto3 form: 0, 3, 6 or 9 fractional digits ("1.500s", "15s"). */
export function formatDuration(seconds: bigint, nanos: number): string {
  const negative = seconds < 0n || nanos < 0;
  const s = seconds < 0n ? -seconds : seconds;
  const n = Math.abs(nanos);
  return `${negative ? '-' : ''}${s}${fraction(n)}s`;
}

function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const nine = String(nanos).padStart(9, '0');
  if (nine.endsWith('000000')) return '.' + nine.slice(0, 3);
  if (nine.endsWith('000')) return '.' + nine.slice(0, 6);
  return '.' + nine;
}

/** RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, as protobuf prints it. */
export function formatTimestamp(seconds: bigint, nanos: number): string {
  const iso = new Date(Number(seconds) * 1000).toISOString(); // 2024-01-02T03:04:05.000Z
  return iso.slice(0, 19) + fraction(nanos) + 'Z';
}

/** A Date (or ms since the epoch) as a protobuf Timestamp string, the form config_dump's `last_updated` uses. */
export function timestampString(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  const seconds = Math.floor(ms / 1000);
  return formatTimestamp(BigInt(seconds), Math.round(ms - seconds * 1000) * 1_000_000);
}

function structJson(type: protobuf.Type, msg: JsonObject): JsonObject {
  const valueType = resolvedTypeOf(fieldById(type, 1)) as protobuf.Type;
  const fields = (msg[fieldById(type, 1).name] as JsonObject | undefined) ?? {};
  const out: JsonObject = {};
  for (const k of Object.keys(fields)) out[k] = valueJson(valueType, fields[k] as JsonObject);
  return out;
}

function listJson(type: protobuf.Type, msg: JsonObject): unknown[] {
  const valueType = resolvedTypeOf(fieldById(type, 1)) as protobuf.Type;
  const values = (msg[fieldById(type, 1).name] as JsonObject[] | undefined) ?? [];
  return values.map((v) => valueJson(valueType, v));
}

function valueJson(type: protobuf.Type, msg: JsonObject): unknown {
  const has = (id: number) => {
    const f = fieldById(type, id);
    return Object.hasOwn(msg, f.name) && msg[f.name] != null ? f : undefined;
  };
  const num = has(2) ?? has(3) ?? has(4);
  if (num) return msg[num.name];
  const st = has(5);
  if (st) return structJson(resolvedTypeOf(st) as protobuf.Type, msg[st.name] as JsonObject);
  const li = has(6);
  if (li) return listJson(resolvedTypeOf(li) as protobuf.Type, msg[li.name] as JsonObject);
  return null;
}

function anyJson(msg: JsonObject, path: string, opts: ToJsonOptions): JsonObject {
  const url = msg.type_url as string | undefined;
  const value = (msg.value as Uint8Array | undefined) ?? new Uint8Array();
  if (!url) return {};
  const inner = findType(typeNameOf(url));
  if (!inner) {
    if (opts.unknownAny === 'raw') return { '@type': url, value: Buffer.from(value).toString('base64') };
    throw new ProtoJsonError(join(path, '@type'), `unknown @type ${JSON.stringify(url)}`);
  }
  let decoded: protobuf.Message;
  try {
    decoded = inner.decode(value);
  } catch (err) {
    throw new ProtoJsonError(path, `cannot decode an Any of ${typeNameOf(url)}: ${(err as Error).message}`);
  }
  const body = messageJson(inner, decoded as unknown as JsonObject, path, opts);
  if (hasSpecialJson(fullNameOf(inner))) return { '@type': url, value: body };
  return { '@type': url, ...(body as JsonObject) };
}

// ---------------------------------------------------------------------------------------------------------------
// Conveniences

/** JSON → wire bytes of `typeName`. */
export function encode(typeName: string, json: unknown): Uint8Array {
  const type = lookupType(typeName);
  return type.encode(fromJson(typeName, json)).finish();
}

/** Wire bytes of `typeName` → canonical JSON. */
export function decode(typeName: string, bytes: Uint8Array, opts?: ToJsonOptions): JsonObject {
  return toJson(typeName, bytes, opts);
}

export interface AnyMessage {
  type_url: string;
  value: Uint8Array;
}

/** JSON with `"@type"` → an Any as it travels in xDS (`{type_url, value}`). */
export function packAny(json: unknown): AnyMessage {
  const obj = anyObject(json, '');
  if (!obj.type_url) throw new ProtoJsonError('', 'missing "@type"');
  return { type_url: obj.type_url as string, value: obj.value as Uint8Array };
}

/** An Any (`{type_url, value}`) → JSON with `"@type"`. */
export function unpackAny(any: { type_url: string; value: Uint8Array | Buffer }, opts?: ToJsonOptions): JsonObject {
  return anyJson({ type_url: any.type_url, value: any.value }, '', opts ?? {});
}

/** `toJson(typeName, fromJson(typeName, json))`: fills in nothing, drops defaults, normalizes every form. */
export function canonicalize(typeName: string, json: unknown, opts?: ToJsonOptions): JsonObject {
  return toJson(typeName, fromJson(typeName, json), opts);
}

/**
 * A message as @grpc/proto-loader hands it over (adsService(): snake_case fields, enums and 64-bit integers as
 * strings, Struct as {fields: {k: {stringValue...}}}) → canonical JSON. E.g. the node of a DiscoveryRequest:
 * `fromGrpcObject('envoy.config.core.v3.Node', req.node).metadata.role`.
 */
export function fromGrpcObject(typeName: string, obj: unknown): JsonObject {
  const type = lookupType(typeName);
  return toJson(typeName, type.fromObject((obj ?? {}) as Record<string, unknown>));
}

/**
 * Canonical JSON → the plain object @grpc/proto-loader serializes (adsService()), e.g. a node for a
 * DiscoveryRequest. Only set fields are present, so nothing but them goes on the wire.
 */
export function toGrpcObject(typeName: string, json: unknown): Record<string, unknown> {
  const type = lookupType(typeName);
  return type.toObject(fromJson(typeName, json), {
    longs: String,
    enums: String,
    bytes: Buffer,
    defaults: false,
    arrays: false,
  });
}

export { typeNameOf, typeUrlOf };
