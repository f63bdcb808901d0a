// The resource types the server serves: the built-in kinds and, at run time, every established CRD version.
import { type CompiledNode, compileSchema } from './cel/compile.ts';
import { crdSchema, crdSchemaPath, crdTable, type JSONSchemaProps, type PrinterColumn } from './crd.ts';
import { builtinSchema, type SchemaNode } from './schema.ts';
import { type K8sObject, objectKey } from './store.ts';
import { builtinTables, defaultTable, type TableSpec } from './tables.ts';

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Storage bucket, shared by all versions of a group-resource. */
  bucket: string;
  /** Has a `/status` subresource: main-resource writes keep status, status writes take only status. */
  status: boolean;
  scale?: ScaleSpec;
  schema: SchemaNode;
  table: TableSpec;
  /** Extra fields a field selector may use (besides metadata.name and metadata.namespace). */
  fields?: (obj: K8sObject) => Record<string, string>;
  builtin: boolean;
  /** Built-ins: the client-node model of the kind (builtin-types.json), e.g. `V1Pod`. */
  model?: string;
  /** CRD-only: the version's schema, the storage version. */
  crd?: {
    schema?: JSONSchemaProps;
    storageVersion: string;
    uid: string;
    selectableFields: string[];
    /** The version's compiled x-kubernetes-validations (cel/compile.ts), compiled when the CRD was stored. */
    rules?: CompiledNode;
  };
  /** Create/update/delete allowed (false for read-only views). */
  readonly?: boolean;
}

export function gv(rt: { group: string; version: string }): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

/** The store key of an object of `rt` (a cluster-scoped object's key has no namespace). */
export function storeKey(rt: ResourceType, namespace: string | undefined, name: string): string {
  return objectKey(rt.namespaced ? namespace : undefined, name);
}

/** The stored object in the version `rt` serves (CRD versions differ only in apiVersion: conversion None). */
export function present(rt: ResourceType, obj: K8sObject): K8sObject {
  const apiVersion = gv(rt);
  if (obj.apiVersion === apiVersion && obj.kind === rt.kind) return obj;
  return { ...obj, apiVersion, kind: rt.kind };
}

function builtin(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  opts: Partial<Pick<ResourceType, 'shortNames' | 'categories' | 'status' | 'scale' | 'fields'>> & {
    model?: string;
  } = {},
): ResourceType {
  const model = opts.model ?? `V1${kind}`;
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: opts.shortNames ?? [],
    categories: opts.categories ?? [],
    bucket: `${group || 'core'}/${plural}`,
    status: opts.status ?? false,
    scale: opts.scale,
    schema: builtinSchema(model),
    model,
    table: builtinTables[plural] ?? defaultTable,
    fields: opts.fields,
    builtin: true,
  };
}

const replicasScale: ScaleSpec = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};

export function builtinResources(): ResourceType[] {
  return [
    builtin('', 'v1', 'Namespace', 'namespaces', false, {
      shortNames: ['ns'],
      status: true,
      fields: (o) => ({ 'status.phase': o.status?.phase ?? '' }),
    }),
    builtin('', 'v1', 'Pod', 'pods', true, {
      shortNames: ['po'],
      categories: ['all'],
      status: true,
      fields: (o) => ({
        'spec.nodeName': o.spec?.nodeName ?? '',
        'spec.restartPolicy': o.spec?.restartPolicy ?? '',
        'spec.schedulerName': o.spec?.schedulerName ?? '',
        'spec.serviceAccountName': o.spec?.serviceAccountName ?? '',
        'spec.hostNetwork': String(o.spec?.hostNetwork ?? false),
        'status.phase': o.status?.phase ?? '',
        'status.podIP': o.status?.podIP ?? '',
        'status.nominatedNodeName': o.status?.nominatedNodeName ?? '',
      }),
    }),
    builtin('', 'v1', 'Service', 'services', true, {
      shortNames: ['svc'],
      categories: ['all'],
      status: true,
      fields: (o) => ({ 'spec.clusterIP': o.spec?.clusterIP ?? '', 'spec.type': o.spec?.type ?? '' }),
    }),
    builtin('', 'v1', 'Endpoints', 'endpoints', true, { shortNames: ['ep'] }),
    builtin('', 'v1', 'ConfigMap', 'configmaps', true, { shortNames: ['cm'] }),
    builtin('', 'v1', 'Secret', 'secrets', true, { fields: (o) => ({ type: o.type ?? '' }) }),
    builtin('', 'v1', 'ServiceAccount', 'serviceaccounts', true, { shortNames: ['sa'] }),
    builtin('', 'v1', 'Event', 'events', true, {
      shortNames: ['ev'],
      model: 'CoreV1Event',
      fields: (o) => ({
        'involvedObject.kind': o.involvedObject?.kind ?? '',
        'involvedObject.namespace': o.involvedObject?.namespace ?? '',
        'involvedObject.name': o.involvedObject?.name ?? '',
        'involvedObject.uid': o.involvedObject?.uid ?? '',
        'involvedObject.apiVersion': o.involvedObject?.apiVersion ?? '',
        'involvedObject.resourceVersion': o.involvedObject?.resourceVersion ?? '',
        'involvedObject.fieldPath': o.involvedObject?.fieldPath ?? '',
        reason: o.reason ?? '',
        reportingComponent: o.reportingComponent ?? '',
        source: o.source?.component ?? '',
        type: o.type ?? '',
      }),
    }),
    builtin('', 'v1', 'Node', 'nodes', false, {
      shortNames: ['no'],
      status: true,
      fields: (o) => ({ 'spec.unschedulable': String(o.spec?.unschedulable ?? false) }),
    }),
    builtin('apps', 'v1', 'Deployment', 'deployments', true, {
      shortNames: ['deploy'],
      categories: ['all'],
      status: true,
      scale: replicasScale,
    }),
    builtin('apps', 'v1', 'ReplicaSet', 'replicasets', true, {
      shortNames: ['rs'],
      categories: ['all'],
      status: true,
      scale: replicasScale,
      fields: (o) => ({ 'status.replicas': String(o.status?.replicas ?? 0) }),
    }),
    builtin('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true, {}),
    builtin('coordination.k8s.io', 'v1', 'Lease', 'leases', true, {}),
    builtin('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true, {}),
    builtin('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true, {}),
    builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false, {}),
    builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false, {}),
    builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, {
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      status: true,
    }),
    // pkg/registry/admissionregistration/validatingadmissionpolicy{,binding}/storage: cluster-scoped, category
    // api-extensions, the policy with a status subresource (status.typeChecking).
    builtin('admissionregistration.k8s.io', 'v1', 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', false, {
      categories: ['api-extensions'],
      status: true,
    }),
    builtin(
      'admissionregistration.k8s.io',
      'v1',
      'ValidatingAdmissionPolicyBinding',
      'validatingadmissionpolicybindings',
      false,
      { categories: ['api-extensions'] },
    ),
  ];
}

/** One ResourceType per served version of an established CRD. */
export function crdResources(crd: K8sObject): ResourceType[] {
  const s = crd.spec;
  const storage = (s.versions as any[]).find((v) => v.storage)?.name;
  const out: ResourceType[] = [];
  (s.versions as any[]).forEach((v, i) => {
    if (!v.served) return;
    const schema: JSONSchemaProps | undefined = v.schema?.openAPIV3Schema;
    const cols: PrinterColumn[] | undefined = v.additionalPrinterColumns;
    const selectable: string[] = (v.selectableFields ?? []).map((f: any) => String(f.jsonPath).replace(/^\./, ''));
    out.push({
      group: s.group,
      version: v.name,
      kind: s.names.kind,
      listKind: s.names.listKind ?? `${s.names.kind}List`,
      plural: s.names.plural,
      singular: s.names.singular ?? String(s.names.kind).toLowerCase(),
      namespaced: s.scope === 'Namespaced',
      shortNames: s.names.shortNames ?? [],
      categories: s.names.categories ?? [],
      bucket: `${s.group}/${s.names.plural}`,
      status: !!v.subresources?.status,
      scale: v.subresources?.scale
        ? {
            specReplicasPath: v.subresources.scale.specReplicasPath,
            statusReplicasPath: v.subresources.scale.statusReplicasPath,
            labelSelectorPath: v.subresources.scale.labelSelectorPath,
          }
        : undefined,
      schema: crdSchema(schema, true),
      table: crdTable(cols),
      builtin: false,
      crd: {
        schema,
        storageVersion: storage,
        uid: crd.metadata.uid!,
        selectableFields: selectable,
        rules: compileSchema(schema, crdSchemaPath(i)).root,
      },
    });
  });
  return out;
}

/** Lookup of served resources by group/version/plural, kind and short names. */
export class ResourceRegistry {
  private byGvr = new Map<string, ResourceType>();
  private crdTypes = new Map<string, ResourceType[]>();
  private readonly builtins: ResourceType[];

  constructor() {
    this.builtins = builtinResources();
    this.rebuild();
  }

  private rebuild(): void {
    this.byGvr = new Map();
    for (const rt of this.all()) this.byGvr.set(`${rt.group}/${rt.version}/${rt.plural}`, rt);
  }

  all(): ResourceType[] {
    return [...this.builtins, ...[...this.crdTypes.values()].flat()];
  }

  get(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byGvr.get(`${group}/${version}/${plural}`);
  }

  /** The preferred (first served) version of a group-resource. */
  preferred(group: string, plural: string): ResourceType | undefined {
    return this.all().find((r) => r.group === group && r.plural === plural);
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    return this.all().find((r) => r.group === group && r.version === version && r.kind === kind);
  }

  byBucket(bucket: string): ResourceType | undefined {
    return this.all().find((r) => r.bucket === bucket);
  }

  setCrd(name: string, types: ResourceType[]): void {
    if (types.length) this.crdTypes.set(name, types);
    else this.crdTypes.delete(name);
    this.rebuild();
  }

  /** Groups with their versions, in discovery order (built-in groups first). */
  groups(): { name: string; versions: string[] }[] {
    const out: { name: string; versions: string[] }[] = [];
    for (const rt of this.all()) {
      if (!rt.group) continue;
      let g = out.find((x) => x.name === rt.group);
      if (!g) {
        g = { name: rt.group, versions: [] };
        out.push(g);
      }
      if (!g.versions.includes(rt.version)) g.versions.push(rt.version);
    }
    for (const g of out) g.versions.sort(compareVersions);
    return out;
  }
}

/** Kubernetes version priority: GA > beta > alpha, higher numbers first (v1 > v1beta2 > v1beta1 > v1alpha1). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0, v] as const;
    return [Number(m[1]), m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3, Number(m[3] ?? 0), v] as const;
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa[1] !== pb[1]) return pb[1] - pa[1];
  if (pa[0] !== pb[0]) return pb[0] - pa[0];
  if (pa[2] !== pb[2]) return pb[2] - pa[2];
  return a < b ? -1 : 1;
}
