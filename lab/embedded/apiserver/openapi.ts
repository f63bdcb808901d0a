// OpenAPI v3 documents, enough for kubectl: its `--validate=strict` (the default) looks for the PATCH operation of the
// object's group-version-kind and, when that operation takes the `fieldValidation` query parameter, leaves validation
// to the server (which answers 400 naming unknown fields). Request bodies advertise JSON, merge and apply patches only
// (not strategic merge), so kubectl builds merge patches for custom resources, as it must without full schemas.
import { createHash } from 'node:crypto';
import { gv, type ResourceRegistry, type ResourceType } from './resources.ts';
import { builtinTypeTable } from './schema.ts';

const QUERY = (name: string, description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', uniqueItems: true },
});

function gvk(rt: ResourceType) {
  return { group: rt.group, version: rt.version, kind: rt.kind };
}

function ref(rt: ResourceType): string {
  return `#/components/schemas/${schemaName(rt)}`;
}

function schemaName(rt: ResourceType): string {
  const g = rt.group ? rt.group.split('.').reverse().join('.') : 'io.k8s.api.core';
  return `${g}.${rt.version}.${rt.kind}`;
}

function op(rt: ResourceType, action: string, extraParams: unknown[] = [], body?: Record<string, unknown>) {
  return {
    operationId: `${action}${rt.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(rt),
    parameters: extraParams,
    ...(body ? { requestBody: { content: body, required: true } } : {}),
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: ref(rt) } } } } },
  };
}

export function groupVersionDoc(rts: ResourceType[]) {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  const writeParams = [
    QUERY('dryRun', 'When present, indicates that modifications should not be persisted.'),
    QUERY('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
    QUERY(
      'fieldValidation',
      'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.',
    ),
  ];
  const patchParams = [...writeParams, { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } }];
  for (const rt of rts) {
    const base = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
    const coll = rt.namespaced ? `${base}/namespaces/{namespace}/${rt.plural}` : `${base}/${rt.plural}`;
    const item = `${coll}/{name}`;
    const json = {
      'application/json': { schema: { $ref: ref(rt) } },
      'application/yaml': { schema: { $ref: ref(rt) } },
    };
    const patchBody = {
      'application/json-patch+json': {
        schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
      },
      'application/merge-patch+json': {
        schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
      },
      'application/apply-patch+yaml': {
        schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
      },
    };
    paths[coll] = {
      get: op(rt, 'list'),
      post: op(rt, 'post', writeParams, json),
      delete: op(rt, 'deletecollection'),
    };
    paths[item] = {
      get: op(rt, 'get'),
      put: op(rt, 'put', writeParams, json),
      patch: op(rt, 'patch', patchParams, patchBody),
      delete: op(rt, 'delete'),
    };
    if (rt.status) {
      paths[`${item}/status`] = {
        get: op(rt, 'get'),
        put: op(rt, 'put', writeParams, json),
        patch: op(rt, 'patch', patchParams, patchBody),
      };
    }
    schemas[schemaName(rt)] = {
      type: 'object',
      description: `${rt.kind} (${gv(rt)})`,
      'x-kubernetes-group-version-kind': [gvk(rt)],
      ...(rt.crd?.schema ? { properties: rt.crd.schema.properties ?? {} } : {}),
      ...(rt.model ? { properties: builtinProperties(rt.model, schemas) } : {}),
    };
  }
  schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Patch'] = {
    type: 'object',
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
  };
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0-gwlab' },
    paths,
    components: { schemas },
  };
}

/** `/openapi/v3`: the index of group-version documents with content hashes (kubectl caches by hash). */
export function openapiIndex(registry: ResourceRegistry): { index: unknown; docs: Map<string, unknown> } {
  const docs = new Map<string, unknown>();
  const byGv = new Map<string, ResourceType[]>();
  for (const rt of registry.all()) {
    const key = rt.group ? `apis/${rt.group}/${rt.version}` : `api/${rt.version}`;
    const list = byGv.get(key) ?? [];
    list.push(rt);
    byGv.set(key, list);
  }
  const paths: Record<string, unknown> = {};
  for (const [key, rts] of byGv) {
    const doc = groupVersionDoc(rts);
    docs.set(key, doc);
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { index: { paths }, docs };
}

/**
 * Field schemas of a built-in model from builtin-types.json (types and formats, no descriptions), so
 * `kubectl explain <kind>.<field>` lists fields. Nested models go to components as `builtin.<Model>`.
 */
function builtinProperties(model: string, schemas: Record<string, unknown>): Record<string, unknown> {
  const table = builtinTypeTable();
  const typeSchema = (t: string, format: string): Record<string, unknown> => {
    let m = /^Array<(.+)>$/.exec(t);
    if (m) return { type: 'array', items: typeSchema(m[1], '') };
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
        return { 'x-kubernetes-int-or-string': true };
      case 'any':
      case 'object':
        return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    }
    if (!table[t]) return { type: 'object' };
    const name = `builtin.${t}`;
    if (!schemas[name]) {
      schemas[name] = { type: 'object' };
      schemas[name] = { type: 'object', properties: fields(t) };
    }
    return { allOf: [{ $ref: `#/components/schemas/${name}` }] };
  };
  const fields = (t: string) =>
    Object.fromEntries((table[t] ?? []).map(([name, type, format]) => [name, typeSchema(type, format)]));
  return fields(model);
}
