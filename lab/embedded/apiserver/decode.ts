// Decoding a request body and checking it against its type, before any verb logic: JSON, YAML or Kubernetes protobuf
// (protobuf.ts); TypeMeta that must match the URL; unknown and mistyped fields per `fieldValidation` (Strict → 400
// naming them, Warn → Warning headers, Ignore → dropped), as Kubernetes' decoder and CRD pruning treat them.
import YAML from 'yaml';
import { pruneUnknown } from './crd.ts';
import { errors } from './errors.ts';
import type { WriteOptions } from './options.ts';
import { decodeProtobuf, isProtobuf } from './protobuf.ts';
import { gv, type ResourceType } from './resources.ts';
import { builtinSchema, dropUnknown, unknownFields } from './schema.ts';
import type { K8sObject } from './store.ts';
import { checkModel } from './validation.ts';

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Parses a request body (JSON, YAML or Kubernetes protobuf) into an object. */
export function decodeBody(body: Buffer, contentType: string): unknown {
  if (isProtobuf(contentType)) return decodeProtobuf(body);
  const text = body.toString('utf8');
  if (!text.trim()) throw errors.badRequest('the request body is empty: an object is required');
  const ct = contentType.split(';')[0].trim().toLowerCase();
  try {
    if (ct.endsWith('yaml')) return parseYaml(text);
    return JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(
      `the body of the request could not be decoded as ${ct.endsWith('yaml') ? 'YAML' : 'JSON'}: ${e instanceof Error ? e.message.split('\n')[0] : e}`,
    );
  }
}

/**
 * A YAML body. What client-node and kubectl send as application/apply-patch+yaml is JSON, which is YAML (1.2), and
 * JSON.parse reads it in well under 1 % of the yaml package's time (lab:up's 14 applies: ~0.3 s of the lab process's
 * CPU on a cold start, issue 14). The JSON path is taken only when it gives what the YAML parser would: every key in
 * the text (a string literal followed by `:`, strings read with their escapes, so a `":` inside a string value, as in
 * the Gateway API CRDs' descriptions, is not one) became a key of its own, i.e. none is repeated (the yaml package
 * refuses a repeated key; JSON.parse would keep the last); anything else (a repeat, YAML that is not JSON) goes to the
 * YAML parser as before.
 */
function parseYaml(text: string): unknown {
  if (/^\s*\{/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined && countKeys(parsed) === jsonKeysInText(text)) return parsed;
  }
  return YAML.parse(text, { maxAliasCount: 100 });
}

/** The object keys written in a JSON text that JSON.parse accepted: string literals followed by `:`. */
export function jsonKeysInText(text: string): number {
  let keys = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== 0x22) continue; // a string literal starts
    i++;
    while (text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1; // to its closing quote
    let j = i + 1;
    while (j < text.length && (text[j] === ' ' || text[j] === '\n' || text[j] === '\r' || text[j] === '\t')) j++;
    if (text[j] === ':') keys++;
  }
  return keys;
}

/** The keys of every object in a parsed JSON value. */
function countKeys(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countKeys(x), 0);
  if (!isObj(v)) return 0;
  let n = 0;
  for (const k in v) n += 1 + countKeys(v[k]);
  return n;
}

/** The body must be an object of the URL's kind and version (or a Scale for /scale); sets apiVersion and kind. */
export function checkTypeMeta(rt: ResourceType, obj: unknown): K8sObject {
  if (!isObj(obj)) throw errors.badRequest(`the request body must be a ${rt.kind} object`);
  const o = obj as K8sObject;
  if (o.kind !== undefined && o.kind !== rt.kind && !(rt.scale && o.kind === 'Scale'))
    throw errors.badRequest(`the kind of the object (${o.kind}) does not match the kind on the URL (${rt.kind})`);
  if (o.apiVersion !== undefined && o.apiVersion !== gv(rt) && !(rt.scale && o.kind === 'Scale'))
    throw errors.badRequest(
      `the API version in the data (${o.apiVersion}) does not match the expected API version (${gv(rt)})`,
    );
  if (o.metadata !== undefined && !isObj(o.metadata))
    throw errors.badRequest(
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: metadata must be an object`,
    );
  o.metadata ??= {};
  o.apiVersion = gv(rt);
  o.kind = rt.kind;
  return o;
}

/**
 * Unknown and mistyped fields. Strict → 400 naming the fields; Warn → warnings; Ignore → dropped silently.
 * Unknown fields are always dropped from what is stored, as Kubernetes' decoder and CRD pruning do.
 */
export function fieldValidation(rt: ResourceType, obj: K8sObject, opts: WriteOptions): void {
  let unknown: string[];
  if (rt.builtin) {
    unknown = unknownFields(rt.schema, obj);
    if (unknown.length) dropUnknown(rt.schema, obj);
  } else {
    const meta = builtinSchema('V1ObjectMeta');
    unknown = unknownFields(meta, obj.metadata, 'metadata');
    if (unknown.length) dropUnknown(meta, obj.metadata);
    unknown.push(...pruneUnknown(rt.crd?.schema, obj));
  }
  if (unknown.length) {
    const msgs = unknown.map((f) => `unknown field "${f}"`);
    if (opts.fieldValidation === 'Strict') {
      throw errors.badRequest(
        `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${msgs.join(', ')}`,
        unknown.map((f) => ({ reason: 'FieldValueInvalid', message: `unknown field "${f}"`, field: f })),
      );
    }
    if (opts.fieldValidation === 'Warn') opts.warnings.push(...msgs);
  }
  if (rt.builtin) {
    const mc = checkModel(rt.plural, obj);
    if (mc.typeErrors.length) {
      const t = mc.typeErrors[0];
      throw errors.badRequest(
        `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: json: cannot unmarshal ${jsonTypeName(t.actual)} into Go struct field ${t.field} of type ${t.expected}`,
        mc.typeErrors.map((e) => ({
          reason: 'FieldValueTypeInvalid',
          field: e.field,
          message: `expected ${e.expected}, got ${jsonTypeName(e.actual)}`,
        })),
      );
    }
  }
}

function jsonTypeName(t: string): string {
  return t === 'object' ? 'object' : t === 'array' ? 'array' : t;
}
