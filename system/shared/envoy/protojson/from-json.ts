// JSON → message: Envoy-style proto3 JSON (or YAML already parsed to JSON values) into protobufjs' plain-object form,
// checked as protobuf's JSON parser checks it (unknown fields, a field or a oneof set twice, ranges of integers,
// enum names, the well-known types' own forms), every error naming its JSON path.
import protobuf from 'protobufjs';
import { findType, lookupType, typeNameOf } from '../protos.ts';
import {
  camelToSnake,
  describe,
  fieldById,
  fieldsOf,
  fullNameOf,
  hasSpecialJson,
  INT64_TYPES,
  type JsonObject,
  join,
  ProtoJsonError,
  resolvedTypeOf,
  typeName,
  WKT,
  WRAPPERS,
} from './reflection.ts';

const INT32_RANGE: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  sint32: [-2147483648, 2147483647],
  sfixed32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  fixed32: [0, 4294967295],
};
const MAX_DURATION_SECONDS = 315576000000;

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

export function anyObject(json: unknown, path: string): JsonObject {
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
