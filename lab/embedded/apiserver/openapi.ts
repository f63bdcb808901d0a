// OpenAPI v3 documents, enough for kubectl: its `--validate=strict` (the default) looks for the PATCH operation of the
// object's group-version-kind and, when that operation takes the `fieldValidation` query parameter, leaves validation
// to the server (which answers 400 naming unknown fields). Request bodies advertise JSON, merge and apply patches only
// (not strategic merge), so kubectl builds merge patches for custom resources, as it must without full schemas.
import { createHash } from 'node:crypto';
import { addObjectMeta, builtinDefinition, crdDefinition, schemaName } from './openapi-schemas.ts';
import { gv, type ResourceRegistry, type ResourceType } from './resources.ts';

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
  const schemas: Record<string, Record<string, any>> = {};
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
    const def = rt.model ? builtinDefinition(rt.model, schemas, 'v3') : crdDefinition(rt, 'v3');
    if (!rt.model) addObjectMeta(schemas, 'v3');
    schemas[schemaName(rt)] = {
      description: `${rt.kind} (${gv(rt)})`,
      ...def,
      'x-kubernetes-group-version-kind': [gvk(rt)],
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

/** Resource types in a fixed order (group, version, plural), so a document's bytes and hash depend on content only. */
export function byName(rts: ResourceType[]): ResourceType[] {
  const k = (r: ResourceType) => `${r.group}/${r.version}/${r.plural}`;
  return [...rts].sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
}

/** A document's content hash, as kube-apiserver's (SHA-512, upper-case hex): the v3 index's `hash`, the ETag. */
export function contentHash(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase();
}

/**
 * `/openapi/v3`: the index of group-version documents with content hashes (kubectl caches by hash), and each
 * document serialized once.
 */
export function openapiIndex(registry: ResourceRegistry): {
  index: unknown;
  docs: Map<string, { json: string; hash: string }>;
} {
  const docs = new Map<string, { json: string; hash: string }>();
  const byGv = new Map<string, ResourceType[]>();
  for (const rt of byName(registry.all())) {
    const key = rt.group ? `apis/${rt.group}/${rt.version}` : `api/${rt.version}`;
    const list = byGv.get(key) ?? [];
    list.push(rt);
    byGv.set(key, list);
  }
  const paths: Record<string, unknown> = {};
  for (const [key, rts] of byGv) {
    const json = JSON.stringify(groupVersionDoc(rts));
    const hash = contentHash(json);
    docs.set(key, { json, hash });
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { index: { paths }, docs };
}
