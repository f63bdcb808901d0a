// Which objects a list or a watch shows: label and field selectors (system/shared/selectors.ts; a malformed one is
// 400), the field values a resource can be selected by (metadata.name/namespace, the kind's own fields, a CRD's
// selectableFields), and paging with `limit` and `continue` as Kubernetes does it: the token carries the revision of
// the first page, later pages show the list as it was then (rebuilt from the store's history), and a token older
// than that history gets 410 Expired with a token that continues at the latest revision.
import {
  type FieldRequirement,
  type LabelRequirement,
  matchFields,
  matchRequirements,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from '../../../system/shared/selectors.ts';
import { errors } from './errors.ts';
import { evalJsonPath } from './jsonpath.ts';
import type { ListOptions } from './options.ts';
import { present, type ResourceType, storeKey } from './resources.ts';
import type { K8sObject, Store } from './store.ts';

export interface Selectors {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

/** Field selector values of an object (metadata.name/namespace, the resource's own fields, CRD selectable fields). */
export function fieldsOf(rt: ResourceType, obj: K8sObject): Record<string, string> {
  const f: Record<string, string> = {
    'metadata.name': obj.metadata.name ?? '',
    'metadata.namespace': obj.metadata.namespace ?? '',
  };
  if (rt.fields) Object.assign(f, rt.fields(obj));
  for (const p of rt.crd?.selectableFields ?? []) {
    const v = evalJsonPath(obj, `.${p}`)[0];
    f[p] = v === undefined || v === null ? '' : String(v);
  }
  return f;
}

function allowedFields(rt: ResourceType): Set<string> {
  return new Set(Object.keys(fieldsOf(rt, { metadata: {}, spec: {}, status: {} })));
}

/** The request's `labelSelector` and `fieldSelector`; a malformed one is 400 BadRequest. */
export function selectorsOf(rt: ResourceType, opts: ListOptions): Selectors {
  return asBadRequest(() => ({
    labels: parseLabelSelector(opts.labelSelector),
    fields: parseFieldSelector(opts.fieldSelector, allowedFields(rt), `"${rt.kind}"`),
  }));
}

export function matchesSelectors(rt: ResourceType, obj: K8sObject, sel: Selectors): boolean {
  if (sel.labels.length && !matchRequirements(sel.labels, obj.metadata.labels)) return false;
  if (sel.fields.length && !matchFields(sel.fields, fieldsOf(rt, obj))) return false;
  return true;
}

/** A page of the objects of `rt` in `namespace` (all namespaces when undefined) that the selectors select. */
export function listObjects(
  store: Store,
  rt: ResourceType,
  namespace: string | undefined,
  opts: ListOptions,
): { items: K8sObject[]; rv: number; continue?: string; remaining?: number } {
  const sel = selectorsOf(rt, opts);
  let rv = store.revision();
  let start: string | undefined;
  let all: K8sObject[] | undefined;
  if (opts.continue) {
    // Kubernetes' token: base64 of {v, rv, start}. Later pages show the list as it was at the first page's
    // revision (rv); -1 (from an expired token's answer) continues at the latest one.
    let c: { v?: unknown; rv?: unknown; start?: unknown };
    try {
      c = JSON.parse(Buffer.from(opts.continue, 'base64url').toString());
    } catch {
      throw errors.badRequest('continue key is not valid: illegal base64 data at input byte 0');
    }
    if (c?.v !== 'meta.k8s.io/v1')
      throw errors.badRequest('continue key is not valid: server does not recognize this encoded version');
    if (typeof c.start !== 'string' || !c.start)
      throw errors.badRequest('continue key is not valid: encoded start key empty');
    if (typeof c.rv !== 'number' || !Number.isInteger(c.rv) || (c.rv < 1 && c.rv !== -1))
      throw errors.badRequest(
        'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
      );
    start = c.start;
    if (c.rv !== -1 && c.rv < rv) {
      const then = store.listAt(rt.bucket, rt.namespaced ? namespace : undefined, c.rv);
      if (then === 'expired') throw errors.continueExpired(continueToken(-1, start));
      all = then;
      rv = c.rv;
    }
  }
  all ??= store.list(rt.bucket, rt.namespaced ? namespace : undefined);
  const items: K8sObject[] = [];
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Number.POSITIVE_INFINITY;
  let i = 0;
  if (start !== undefined) {
    // Resume after the last key of the previous page.
    while (i < all.length && storeKey(rt, all[i].metadata.namespace, all[i].metadata.name!) <= start) i++;
  }
  let more = false;
  for (; i < all.length; i++) {
    const o = all[i];
    if (!matchesSelectors(rt, o, sel)) continue;
    if (items.length >= limit) {
      more = true;
      break;
    }
    items.push(present(rt, o));
  }
  let cont: string | undefined;
  if (more && items.length) {
    const last = items[items.length - 1];
    cont = continueToken(rv, storeKey(rt, last.metadata.namespace, last.metadata.name!));
  }
  return { items, rv, continue: cont };
}

// ---- decoding and validation ----

/** Runs `fn`, answering a SelectorError as 400 BadRequest with its message and causes. */
export function asBadRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SelectorError) throw errors.badRequest(e.message, e.causes);
    throw e;
  }
}

/** A list continuation token: the revision the list shows and the last key served. */
function continueToken(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}
