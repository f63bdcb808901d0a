// `/openapi/v2`: the Swagger 2.0 document of every served kind, as kube-apiserver publishes it: one definition per
// group-version-kind (`x-kubernetes-group-version-kind`) and the paths' operations with `x-kubernetes-action` and the
// group-version-kind, PATCH taking `fieldValidation`. kubectl 1.32 reads it (always as protobuf, see
// openapi-v2-proto.ts) where OpenAPI v3 does not serve: client-side validation of the items of a `kind: List`
// (kubectl's ParamVerifyingSchema never asks v3 about v1/List) and the strategic-merge-patch metadata of built-in
// kinds in client-side apply. Schemas come from openapi-schemas.ts, shared with v3.

import { KUBE_VERSION } from './discovery.ts';
import { byName } from './openapi.ts';
import { addObjectMeta, builtinDefinition, crdDefinition, type Schema, schemaName } from './openapi-schemas.ts';
import { gv, type ResourceRegistry, type ResourceType } from './resources.ts';

const query = (name: string, type = 'string') => ({ name, in: 'query', type, uniqueItems: true });
const PATH_NAME = { name: 'name', in: 'path', required: true, type: 'string', uniqueItems: true };
const PATH_NAMESPACE = { name: 'namespace', in: 'path', required: true, type: 'string', uniqueItems: true };
const WRITE = [query('dryRun'), query('fieldManager'), query('fieldValidation')];
const PATCH_BODY = {
  name: 'body',
  in: 'body',
  required: true,
  schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
};

function operation(rt: ResourceType, action: string, kindName: string, params: unknown[], body?: Schema) {
  return {
    operationId: `${action}${rt.kind}`,
    consumes:
      action === 'patch'
        ? ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']
        : ['*/*'],
    produces: ['application/json', 'application/yaml'],
    schemes: ['https'],
    parameters: body ? [body, ...params] : params,
    responses: { '200': { description: 'OK', schema: { $ref: `#/definitions/${kindName}` } } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: rt.group, kind: rt.kind, version: rt.version },
  };
}

function addPaths(rt: ResourceType, paths: Record<string, unknown>): void {
  const name = schemaName(rt);
  const base = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
  const coll = rt.namespaced ? `${base}/namespaces/{namespace}/${rt.plural}` : `${base}/${rt.plural}`;
  const item = `${coll}/{name}`;
  const body = { name: 'body', in: 'body', required: true, schema: { $ref: `#/definitions/${name}` } };
  const scope = rt.namespaced ? [PATH_NAMESPACE] : [];
  paths[coll] = {
    get: operation(rt, 'list', name, []),
    post: operation(rt, 'post', name, WRITE, body),
    delete: operation(rt, 'deletecollection', name, []),
    parameters: scope,
  };
  const itemOps = {
    get: operation(rt, 'get', name, []),
    put: operation(rt, 'put', name, WRITE, body),
    patch: operation(rt, 'patch', name, [...WRITE, query('force', 'boolean')], PATCH_BODY),
    parameters: [PATH_NAME, ...scope],
  };
  paths[item] = { ...itemOps, delete: operation(rt, 'delete', name, []) };
  if (rt.status) paths[`${item}/status`] = itemOps;
}

/** The whole v2 document of the served resources. */
export function swaggerDocument(registry: ResourceRegistry): Schema {
  const definitions: Record<string, Schema> = {};
  const paths: Record<string, unknown> = {};
  for (const rt of byName(registry.all())) {
    const def = rt.model ? builtinDefinition(rt.model, definitions, 'v2') : crdDefinition(rt, 'v2');
    if (!rt.model) addObjectMeta(definitions, 'v2');
    definitions[schemaName(rt)] = {
      description: `${rt.kind} (${gv(rt)})`,
      ...def,
      'x-kubernetes-group-version-kind': [{ group: rt.group, kind: rt.kind, version: rt.version }],
    };
    addPaths(rt, paths);
  }
  definitions['io.k8s.apimachinery.pkg.apis.meta.v1.Patch'] = {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  };
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: KUBE_VERSION.gitVersion },
    paths,
    definitions,
  };
}
