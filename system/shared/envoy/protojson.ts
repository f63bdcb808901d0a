// Envoy-style proto3 JSON for the Envoy protos: snake_case field names (camelCase accepted on input, as Envoy does),
// `"@type"` on Any, Duration `"1.5s"`, Timestamp RFC 3339, enums by name, 64-bit integers as strings, wrappers
// unwrapped, Struct/Value as plain JSON, FieldMask as a comma-separated string. protobufjs' own fromObject/toObject do
// not implement these well-known-type rules, so protojson/ walks the reflection itself: the parser (from-json.ts), the
// printer (to-json.ts) and what they share (reflection.ts). Errors name the JSON path. This module is the face that
// the rest of the code imports: those two directions and the conveniences that put them together.
import { anyObject, fromJson } from './protojson/from-json.ts';
import { type JsonObject, ProtoJsonError, type ToJsonOptions } from './protojson/reflection.ts';
import { anyJson, toJson } from './protojson/to-json.ts';
import { lookupType, typeNameOf, typeUrlOf } from './protos.ts';

export { fromJson } from './protojson/from-json.ts';
export { type JsonObject, ProtoJsonError, type ToJsonOptions } from './protojson/reflection.ts';
export { formatDuration, formatTimestamp, timestampString, toJson } from './protojson/to-json.ts';

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
