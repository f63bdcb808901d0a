// get and list (k8s.io/apiserver endpoints/handlers/get.go): an object or a list, as JSON, as a Table (`kubectl get`;
// columns from tables.ts) or as PartialObjectMetadata(List); lists with label and field selectors, `limit` and
// `continue` (core.ts), written item by item.
import type { ResourceType } from '../resources.ts';
import type { K8sObject } from '../store.ts';
import { sendList } from './response.ts';
import { type RequestScope, respond, type TableRenderer } from './scope.ts';

/** Rows and columns of `kubectl get` for any resource type, shared by get, list and Table watches. */
export function tableRenderer(present: (rt: ResourceType, obj: K8sObject) => K8sObject): TableRenderer {
  return {
    columns: (rt) => rt.table.columns,
    row: (rt, obj, includeObject) => {
      const row: Record<string, unknown> = { cells: rt.table.cells(obj, Date.now()) };
      if (includeObject === 'Object') row.object = present(rt, obj);
      else if (includeObject !== 'None')
        row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
      return row;
    },
  };
}

function table(s: RequestScope, items: K8sObject[], meta: Record<string, unknown>) {
  const includeObject = s.q.get('includeObject') ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: meta,
    columnDefinitions: s.tables.columns(s.rt),
    rows: items.map((o) => s.tables.row(s.rt, o, includeObject)),
  };
}

export function getObject(s: RequestScope, name: string): false {
  const obj = s.core.get(s.rt, s.ns, name);
  if (s.neg.as === 'Table') return respond(s, 200, table(s, [obj], { resourceVersion: obj.metadata.resourceVersion }));
  if (s.neg.as === 'PartialObjectMetadata')
    return respond(s, 200, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: obj.metadata,
    });
  return respond(s, 200, obj);
}

export function listObjects(s: RequestScope): false {
  const { core, rt, q } = s;
  const limit = q.has('limit') ? Number(q.get('limit')) : undefined;
  const l = core.list(rt, s.ns, {
    labelSelector: q.get('labelSelector'),
    fieldSelector: q.get('fieldSelector'),
    limit,
    continue: q.get('continue'),
  });
  const meta: Record<string, unknown> = { resourceVersion: String(l.rv) };
  if (l.continue) meta.continue = l.continue;
  if (s.neg.as === 'Table') return respond(s, 200, table(s, l.items, meta));
  if (s.neg.as === 'PartialObjectMetadataList' || s.neg.as === 'PartialObjectMetadata')
    return respond(s, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: meta,
      items: l.items.map((o) => ({
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: o.metadata,
      })),
    });
  s.rec.code = 200;
  s.send(() => sendList(s.res, rt, meta, l.items, (o) => core.store.json(o)));
  return false;
}
