// message → JSON: the canonical Envoy-style proto3 JSON of a message, as protobuf's JSON printer writes it (fields in
// field-number order, defaults left out unless asked, 64-bit integers as strings, the well-known types' own forms,
// Any with "@type"); and the Duration and Timestamp text forms the rest of the code prints.
import protobuf from 'protobufjs';
import { findType, lookupType, typeNameOf } from '../protos.ts';
import {
  fieldById,
  fieldsByNumber,
  fullNameOf,
  hasSpecialJson,
  INT64_TYPES,
  type JsonObject,
  join,
  lowerCamel,
  ProtoJsonError,
  resolvedTypeOf,
  type ToJsonOptions,
  WKT,
  WRAPPERS,
} from './reflection.ts';

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

export function anyJson(msg: JsonObject, path: string, opts: ToJsonOptions): JsonObject {
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
