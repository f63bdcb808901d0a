// The schemas the OpenAPI documents publish (openapi.ts for v3, openapi-v2.ts for v2), from the same sources as the
// server's own validation: built-in kinds from builtin-types.json (fields and types, no descriptions: client-node's
// models carry none) with the list patch strategies of schema.ts as `x-kubernetes-patch-strategy` /
// `x-kubernetes-patch-merge-key` (what kubectl's client-side apply reads to build strategic merge patches), and
// custom resources from their CRD version's openAPIV3Schema with `metadata` pointing at ObjectMeta, as
// kube-apiserver's CRD OpenAPI builder does (apiextensions-apiserver pkg/controller/openapi/builder). For v2, a CRD
// schema loses what Swagger 2.0 cannot say, as apiextensions' ToStructuralOpenAPIV2 strips it (allOf/anyOf/oneOf/not;
// type, items and properties of nullable, preserve-unknown-fields and int-or-string nodes).
import type { ResourceType } from './resources.ts';
import { builtinSchema, builtinTypeTable } from './schema.ts';

export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

export type Schema = Record<string, any>;
export type RefStyle = 'v2' | 'v3';

/**
 * kube-apiserver's definition names: built-ins by their Go package (`io.k8s.api.core.v1.Pod`,
 * `io.k8s.api.apps.v1.Deployment`, `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition`),
 * custom resources by their reversed group (`io.k8s.networking.gateway.v1.Gateway`).
 */
export function schemaName(rt: ResourceType): string {
  let g: string;
  if (!rt.builtin) g = rt.group.split('.').reverse().join('.');
  else if (rt.group === 'apiextensions.k8s.io') g = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions';
  else g = `io.k8s.api.${rt.group ? rt.group.split('.')[0] : 'core'}`;
  return `${g}.${rt.version}.${rt.kind}`;
}

function refTo(name: string, style: RefStyle): Schema {
  return style === 'v2' ? { $ref: `#/definitions/${name}` } : { allOf: [{ $ref: `#/components/schemas/${name}` }] };
}

/**
 * A nested built-in model's definition name: client-node's model name split into its parts (`V1Container` →
 * `builtin.v1.Container`, `CoreV1EventSeries` → `builtin.core.v1.EventSeries`), so kubectl explain shows the
 * kind as against kube-apiserver (`<[]Container>`); ObjectMeta under its own name.
 */
function defName(model: string): string {
  if (model === 'V1ObjectMeta') return OBJECT_META;
  const m = /^([A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$/.exec(model);
  if (!m) return `builtin.${model}`;
  return `builtin.${m[1] ? `${m[1].toLowerCase()}.` : ''}${m[2].toLowerCase()}.${m[3]}`;
}

/** The definition of a built-in model and, into `defs`, of every model it reaches. */
export function builtinDefinition(model: string, defs: Record<string, Schema>, style: RefStyle): Schema {
  const table = builtinTypeTable();
  const typeSchema = (t: string, format: string, owner?: string): Schema => {
    let m = /^Array<(.+)>$/.exec(t);
    if (m) return { type: 'array', items: typeSchema(m[1], ''), ...patchMeta(owner) };
    m = /^\{ \[key: string\]: (.+); \}$/.exec(t);
    if (m) return { type: 'object', additionalProperties: typeSchema(m[1], '') };
    switch (t) {
      case 'string':
        return { type: 'string', ...(format ? { format } : {}) };
      case 'number':
        return format.startsWith('int')
          ? { type: 'integer', format }
          : { type: 'number', ...(format ? { format } : {}) };
      case 'boolean':
        return { type: 'boolean' };
      case 'Date':
        return { type: 'string', format: 'date-time' };
      case 'IntOrString':
        return style === 'v2' ? { format: 'int-or-string' } : { 'x-kubernetes-int-or-string': true };
      case 'any':
      case 'object':
        return style === 'v2' ? { type: 'object' } : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    }
    if (!table[t]) return { type: 'object' };
    const name = defName(t);
    if (!defs[name]) {
      defs[name] = { type: 'object' };
      defs[name] = { type: 'object', properties: fields(t) };
    }
    return refTo(name, style);
  };
  const fields = (t: string): Schema =>
    Object.fromEntries(
      (table[t] ?? []).map(([name, type, format]) => [name, typeSchema(type, format, `${t}.${name}`)]),
    );
  return { type: 'object', properties: fields(model) };
}

/** The strategic-merge-patch metadata of a built-in list field (`Model.field`), from schema.ts's table. */
function patchMeta(owner: string | undefined): Schema {
  if (!owner) return {};
  const [model, field] = owner.split('.');
  const sem = builtinSchema(model).field(field)?.list();
  if (!sem || sem.type === 'atomic') return {};
  if (sem.type === 'set') return { 'x-kubernetes-patch-strategy': 'merge' };
  return {
    'x-kubernetes-patch-strategy': sem.retainKeys ? 'merge,retainKeys' : 'merge',
    'x-kubernetes-patch-merge-key': sem.mergeKey,
  };
}

/** A CRD version's schema as a definition: `metadata` is ObjectMeta; v2 strips what Swagger 2.0 cannot say. */
export function crdDefinition(rt: ResourceType, style: RefStyle): Schema {
  const s: Schema = structuredClone(rt.crd?.schema ?? { type: 'object' });
  s.properties = { ...(s.properties ?? {}), metadata: { ...refTo(OBJECT_META, style) } };
  if (style === 'v2') toV2(s);
  return s;
}

function toV2(s: Schema): void {
  delete s.allOf;
  delete s.anyOf;
  delete s.oneOf;
  delete s.not;
  delete s['x-kubernetes-validations'];
  if (s.nullable || s['x-kubernetes-preserve-unknown-fields'] || s['x-kubernetes-int-or-string']) {
    delete s.type;
    delete s.items;
    delete s.properties;
  }
  delete s.nullable;
  for (const p of Object.values(s.properties ?? {}) as Schema[]) if (p && !p.$ref) toV2(p);
  if (s.items && typeof s.items === 'object') toV2(s.items);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') toV2(s.additionalProperties);
}

/** The ObjectMeta definition (and what it reaches) into `defs`, for custom resources' `metadata`. */
export function addObjectMeta(defs: Record<string, Schema>, style: RefStyle): void {
  if (!defs[OBJECT_META]) defs[OBJECT_META] = builtinDefinition('V1ObjectMeta', defs, style);
}
