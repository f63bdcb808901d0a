// Custom resources: a CRD's structural schema (openAPIV3Schema) drives validation, pruning of unknown fields,
// defaulting, list semantics for apply, and printer columns. Validation runs in kube-apiserver's order: the OpenAPI
// checks (types, required, enums, bounds, patterns, formats), list-type set/map uniqueness, then the CEL rules
// (x-kubernetes-validations, cel/), which are skipped when an OpenAPI error is Required, NotSupported, TooLong,
// TooMany or TypeInvalid (apiextensions-apiserver's hasBlockingErr).

import type { CompiledNode } from './cel/compile.ts';
import { compileSchema } from './cel/compile.ts';
import { validateRules } from './cel/validate.ts';
import { type FieldError, fieldErrors } from './errors.ts';
import { checkFormat } from './formats.ts';
import type { JSONSchemaProps } from './json-schema.ts';
import { evalJsonPath } from './jsonpath.ts';
import type { ListSemantics, SchemaNode } from './schema.ts';
import type { K8sObject } from './store.ts';
import { age, type Column, type TableSpec } from './tables.ts';

export type { JSONSchemaProps } from './json-schema.ts';

const nodeCache = new WeakMap<JSONSchemaProps, SchemaNode>();

/** The SchemaNode view of a structural schema. Metadata at the root is ObjectMeta (not pruned beyond it). */
export function crdSchema(s: JSONSchemaProps | undefined, root = false): SchemaNode {
  if (!s) return anyNode;
  const cached = nodeCache.get(s);
  if (cached && !root) return cached;
  let node: SchemaNode;
  if (s.type === 'array') {
    const lt = s['x-kubernetes-list-type'];
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const sem: ListSemantics =
      lt === 'map' && keys.length
        ? { type: 'map', keys, mergeKey: keys[0] }
        : lt === 'set'
          ? { type: 'set' }
          : { type: 'atomic' };
    node = { kind: 'list', field: () => undefined, item: () => crdSchema(s.items), list: () => sem };
  } else if (s.type === 'object' || s.properties || s.additionalProperties) {
    const props = s.properties ?? {};
    const addl = s.additionalProperties;
    if (!s.properties && addl && typeof addl === 'object') {
      node = { kind: 'map', field: () => crdSchema(addl), item: () => anyNode, list: () => ({ type: 'atomic' }) };
    } else {
      const preserve = !!s['x-kubernetes-preserve-unknown-fields'] || addl === true;
      node = {
        kind: 'object',
        preserveUnknown: preserve,
        field: (name) => {
          if (root && (name === 'apiVersion' || name === 'kind')) return scalarNode;
          if (root && name === 'metadata') return anyNode;
          if (Object.hasOwn(props, name)) return crdSchema(props[name]);
          return preserve ? anyNode : undefined;
        },
        item: () => anyNode,
        list: () => ({ type: 'atomic' }),
      };
    }
  } else if (s['x-kubernetes-preserve-unknown-fields']) {
    node = anyNode;
  } else {
    node = scalarNode;
  }
  if (!root) nodeCache.set(s, node);
  return node;
}

const anyNode: SchemaNode = {
  kind: 'any',
  field: () => anyNode,
  item: () => anyNode,
  list: () => ({ type: 'atomic' }),
};
const scalarNode: SchemaNode = {
  kind: 'scalar',
  field: () => undefined,
  item: () => anyNode,
  list: () => ({ type: 'atomic' }),
};

/** Removes fields the schema does not declare; returns their paths (for strict field validation). */
export function pruneUnknown(schema: JSONSchemaProps | undefined, obj: K8sObject): string[] {
  const removed: string[] = [];
  if (!schema) return removed;
  for (const k of Object.keys(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    const ps = schema.properties?.[k];
    if (!ps) {
      if (!schema['x-kubernetes-preserve-unknown-fields']) {
        removed.push(k);
        delete obj[k];
      }
    } else prune(ps, obj[k], k, removed);
  }
  return removed;
}

function prune(s: JSONSchemaProps, v: unknown, path: string, removed: string[]): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    if (s.items) {
      const items = s.items;
      v.forEach((x, i) => {
        prune(items, x, `${path}[${i}]`, removed);
      });
    }
    return;
  }
  const o = v as Record<string, unknown>;
  if (s['x-kubernetes-embedded-resource']) {
    // apiVersion, kind and metadata of an embedded object are always kept.
  }
  if (s.properties) {
    for (const k of Object.keys(o)) {
      if (s['x-kubernetes-embedded-resource'] && ['apiVersion', 'kind', 'metadata'].includes(k)) continue;
      const ps = s.properties[k];
      if (ps) prune(ps, o[k], `${path}.${k}`, removed);
      else if (typeof s.additionalProperties === 'object') prune(s.additionalProperties, o[k], `${path}.${k}`, removed);
      else if (!s['x-kubernetes-preserve-unknown-fields'] && s.additionalProperties !== true) {
        removed.push(`${path}.${k}`);
        delete o[k];
      }
    }
  } else if (typeof s.additionalProperties === 'object') {
    for (const k of Object.keys(o)) prune(s.additionalProperties, o[k], `${path}[${k}]`, removed);
  } else if (s.type === 'object' && !s['x-kubernetes-preserve-unknown-fields'] && s.additionalProperties !== true) {
    for (const k of Object.keys(o)) {
      removed.push(`${path}.${k}`);
      delete o[k];
    }
  }
}

/** Applies `default`s where a property is absent (and its parent object present). */
export function applyDefaults(schema: JSONSchemaProps | undefined, obj: unknown): void {
  if (!schema || obj === null || typeof obj !== 'object') return;
  if (Array.isArray(obj)) {
    if (schema.items) for (const x of obj) applyDefaults(schema.items, x);
    return;
  }
  const o = obj as Record<string, unknown>;
  for (const [k, ps] of Object.entries(schema.properties ?? {})) {
    if (o[k] === undefined && ps.default !== undefined) o[k] = structuredClone(ps.default);
    if (o[k] !== undefined) applyDefaults(ps, o[k]);
  }
  if (typeof schema.additionalProperties === 'object')
    for (const k of Object.keys(o)) applyDefaults(schema.additionalProperties, o[k]);
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function fmt(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return `"${typeOf(v)}"`;
}

/** Validates a value against a structural schema, collecting Kubernetes-style field errors. */
export function validateSchema(s: JSONSchemaProps, v: unknown, path: string, out: FieldError[]): void {
  if (v === null) {
    if (!s.nullable && s.type && !s['x-kubernetes-preserve-unknown-fields'])
      out.push(fieldErrors.typeInvalid(path, v, `${path} in body must be of type ${s.type}: "null"`));
    return;
  }
  if (s['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v)))
      out.push(fieldErrors.typeInvalid(path, v, `${path} in body must be of type integer,string: ${fmt(v)}`));
  } else if (s.type) {
    const t = typeOf(v);
    const ok = s.type === t || (s.type === 'number' && t === 'integer');
    if (!ok) {
      out.push(fieldErrors.typeInvalid(path, v, `${path} in body must be of type ${s.type}: "${t}"`));
      return;
    }
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    out.push(
      fieldErrors.notSupported(
        path,
        v,
        s.enum.map((e) => String(e)),
      ),
    );
  validateScalar(s, v, path, out);
  if (Array.isArray(v)) validateArray(s, v, path, out);
  else if (typeof v === 'object') validateProperties(s, v as Record<string, unknown>, path, out);
  validateCombinators(s, v, path, out);
}

/** Bounds, pattern and format of strings; bounds of numbers. */
function validateScalar(s: JSONSchemaProps, v: unknown, path: string, out: FieldError[]): void {
  if (typeof v === 'string') {
    if (s.maxLength !== undefined && v.length > s.maxLength)
      out.push({
        field: path,
        reason: 'FieldValueTooLong',
        message: `Too long: may not be more than ${s.maxLength} bytes`,
      });
    if (s.minLength !== undefined && v.length < s.minLength)
      out.push(fieldErrors.invalid(path, v, `${path} in body should be at least ${s.minLength} chars long`));
    if (s.pattern) {
      let re: RegExp | undefined;
      try {
        re = new RegExp(s.pattern, 'u');
      } catch {}
      if (re && !re.test(v)) out.push(fieldErrors.invalid(path, v, `${path} in body should match '${s.pattern}'`));
    }
    if (s.format && !checkFormat(s.format, v))
      out.push(fieldErrors.invalid(path, v, `${path} in body must be of type ${s.format}: ${fmt(v)}`));
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      out.push(fieldErrors.invalid(path, v, `${path} in body should be greater than or equal to ${s.minimum}`));
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
      out.push(fieldErrors.invalid(path, v, `${path} in body should be less than or equal to ${s.maximum}`));
  }
}

/** Item counts, items, and the uniqueness of list-type set and map items. */
function validateArray(s: JSONSchemaProps, v: unknown[], path: string, out: FieldError[]): void {
  if (s.maxItems !== undefined && v.length > s.maxItems)
    out.push({
      field: path,
      reason: 'FieldValueTooMany',
      message: `Too many: ${v.length}: must have at most ${s.maxItems} items`,
    });
  if (s.minItems !== undefined && v.length < s.minItems)
    out.push(fieldErrors.invalid(path, v, `${path} in body should have at least ${s.minItems} items`));
  if (s.items) {
    const items = s.items;
    v.forEach((x, i) => {
      validateSchema(items, x, `${path}[${i}]`, out);
    });
  }
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'set' || s.uniqueItems) {
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const k = JSON.stringify(x);
      if (seen.has(k)) out.push(fieldErrors.duplicate(`${path}[${i}]`, x));
      seen.add(k);
    });
  }
  if (lt === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const k = JSON.stringify(keys.map((kk) => (x as any)?.[kk]));
      if (seen.has(k)) out.push(fieldErrors.duplicate(`${path}[${i}]`, x));
      seen.add(k);
    });
  }
}

/** Required properties, property counts, and each property against its schema (or additionalProperties). */
function validateProperties(s: JSONSchemaProps, o: Record<string, unknown>, path: string, out: FieldError[]): void {
  for (const r of s.required ?? []) if (o[r] === undefined) out.push(fieldErrors.required(path ? `${path}.${r}` : r));
  const n = Object.keys(o).length;
  if (s.maxProperties !== undefined && n > s.maxProperties)
    out.push({
      field: path,
      reason: 'FieldValueTooMany',
      message: `Too many: ${n}: must have at most ${s.maxProperties} items`,
    });
  if (s.minProperties !== undefined && n < s.minProperties)
    out.push(fieldErrors.invalid(path, o, `${path} in body should have at least ${s.minProperties} properties`));
  for (const [k, x] of Object.entries(o)) {
    const child = path ? `${path}.${k}` : k;
    const ps = s.properties?.[k];
    if (ps) validateSchema(ps, x, child, out);
    else if (typeof s.additionalProperties === 'object') validateSchema(s.additionalProperties, x, child, out);
  }
}

/**
 * Value validations of the structural-schema combinators (allOf, anyOf, oneOf, not), with kube-openapi's messages.
 * When no alternative of anyOf/oneOf holds, the errors of the closest one (the most properties valid, else the
 * first) are reported too, as kube-openapi merges its best failure: an address typed IPAddress whose value is
 * neither ipv4 nor ipv6 reports `value in body must be of type ipv4`.
 */
function validateCombinators(s: JSONSchemaProps, v: unknown, path: string, out: FieldError[]): void {
  if (s.allOf) for (const sub of s.allOf) validateSchema(sub, v, path, out);
  const where = path || '<nil>';
  if (s.anyOf) {
    const results = s.anyOf.map((sub) => alternative(sub, v, path));
    if (!results.some((r) => !r.errors.length)) {
      out.push(fieldErrors.invalid(path, v, `${where} in body must validate at least one schema (anyOf)`));
      out.push(...best(results));
    }
  }
  if (s.oneOf) {
    const results = s.oneOf.map((sub) => alternative(sub, v, path));
    const n = results.filter((r) => !r.errors.length).length;
    if (n !== 1) {
      const why = n === 0 ? 'Found none valid' : `Found ${n} valid alternatives`;
      out.push(fieldErrors.invalid(path, v, `${where} in body must validate one and only one schema (oneOf). ${why}`));
      if (n === 0) out.push(...best(results));
    }
  }
  if (s.not) {
    const e: FieldError[] = [];
    validateSchema(s.not, v, path, e);
    if (!e.length) out.push(fieldErrors.invalid(path, v, `${where} in body must not validate the schema (not)`));
  }
}

/** One anyOf/oneOf alternative: its errors and how many of its properties the value satisfies. */
function alternative(sub: JSONSchemaProps, v: unknown, path: string): { errors: FieldError[]; matches: number } {
  const errors: FieldError[] = [];
  validateSchema(sub, v, path, errors);
  let matches = 0;
  if (v && typeof v === 'object' && !Array.isArray(v))
    for (const [k, ps] of Object.entries(sub.properties ?? {})) {
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined) continue;
      const e: FieldError[] = [];
      validateSchema(ps, x, k, e);
      if (!e.length) matches++;
    }
  return { errors, matches };
}

function best(results: { errors: FieldError[]; matches: number }[]): FieldError[] {
  let b = results[0];
  for (const r of results) if (r.matches > b.matches) b = r;
  return b?.errors ?? [];
}

const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/**
 * Validates a custom resource (everything but metadata, which the generic metadata rules cover): the OpenAPI schema,
 * then the CEL rules (`rules`, compiled with the CRD; `old` is the stored object on update) unless an OpenAPI error
 * blocks them. With a status subresource, kube validates `status` on its own (the status strategy), so the
 * OpenAPI messages about it name paths relative to it (`addresses[0].value in body ...` at field
 * `status.addresses[0].value`).
 */
export function validateCustomResource(
  schema: JSONSchemaProps | undefined,
  obj: K8sObject,
  rules?: CompiledNode,
  old?: K8sObject,
  statusSubresource = false,
): FieldError[] {
  if (!schema) return [];
  const errs = validateOpenApi(schema, obj);
  if (statusSubresource)
    for (const e of errs)
      if (e.field.startsWith('status.')) e.message = e.message.replace(/(^|: )status\.(\S*) in body/, '$1$2 in body');
  if (!rules) return errs;
  if (errs.some((e) => BLOCKING.has(e.reason)))
    return [
      ...errs,
      {
        field: '<nil>',
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      },
    ];
  return [...errs, ...validateRules(rules, obj, old)];
}

function validateOpenApi(schema: JSONSchemaProps, obj: K8sObject): FieldError[] {
  const out: FieldError[] = [];
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = obj;
  const s: JSONSchemaProps = { ...schema, properties: { ...schema.properties } };
  delete s.properties!.metadata;
  delete s.properties!.apiVersion;
  delete s.properties!.kind;
  s.required = (schema.required ?? []).filter((r) => !['metadata', 'apiVersion', 'kind'].includes(r));
  validateSchema(s, rest, '', out);
  return out;
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** Table for a custom resource: Name, the printer columns (or Age when none are given). */
export function crdTable(cols: PrinterColumn[] | undefined): TableSpec {
  const name: Column = {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name must be unique within a namespace.',
    priority: 0,
  };
  if (!cols?.length) {
    return {
      columns: [name, { name: 'Age', type: 'date', format: '', description: 'Creation timestamp', priority: 0 }],
      cells: (o, now) => [o.metadata.name, age(o.metadata.creationTimestamp, now)],
    };
  }
  return {
    columns: [
      name,
      ...cols.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? '',
        description: c.description ?? c.name,
        priority: c.priority ?? 0,
      })),
    ],
    cells: (o, now) => [
      o.metadata.name,
      ...cols.map((c) => {
        const v = evalJsonPath(o, c.jsonPath)[0];
        if (v === undefined || v === null) return null;
        if (c.type === 'date' && typeof v === 'string') return age(v, now);
        if (c.type === 'integer' || c.type === 'number') return typeof v === 'number' ? v : null;
        if (c.type === 'boolean') return typeof v === 'boolean' ? v : null;
        return typeof v === 'object' ? JSON.stringify(v) : String(v);
      }),
    ],
  };
}

/** Basic CRD validation (the rules clients hit in practice). */
export function validateCrd(crd: K8sObject): FieldError[] {
  const errs: FieldError[] = [];
  const s = crd.spec ?? {};
  if (!s.group) errs.push(fieldErrors.required('spec.group'));
  if (!s.names?.plural) errs.push(fieldErrors.required('spec.names.plural'));
  if (!s.names?.kind) errs.push(fieldErrors.required('spec.names.kind'));
  if (!['Namespaced', 'Cluster'].includes(s.scope))
    errs.push(fieldErrors.notSupported('spec.scope', s.scope, ['Cluster', 'Namespaced']));
  if (s.group && s.names?.plural && crd.metadata.name !== `${s.names.plural}.${s.group}`)
    errs.push(fieldErrors.invalid('metadata.name', crd.metadata.name, `must be spec.names.plural+"."+spec.group`));
  const versions: any[] = s.versions ?? [];
  if (!versions.length)
    errs.push(fieldErrors.required('spec.versions', 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v.storage).length !== 1)
    errs.push(
      fieldErrors.invalid('spec.versions', versions.length, 'must have exactly one version marked as storage version'),
    );
  versions.forEach((v, i) => {
    if (!v.name) errs.push(fieldErrors.required(`spec.versions[${i}].name`));
    if (v.schema?.openAPIV3Schema && v.schema.openAPIV3Schema.type !== 'object')
      errs.push(
        fieldErrors.invalid(
          `spec.versions[${i}].schema.openAPIV3Schema.type`,
          v.schema.openAPIV3Schema.type,
          'must be object at the root',
        ),
      );
    errs.push(...compileSchema(v.schema?.openAPIV3Schema, crdSchemaPath(i)).errors);
  });
  return errs;
}

/** Where version `i`'s schema sits in a CRD (the prefix of its rules' error paths). */
export function crdSchemaPath(i: number): string {
  return `spec.versions[${i}].schema.openAPIV3Schema`;
}
