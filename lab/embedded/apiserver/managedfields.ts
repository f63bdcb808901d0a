// Server-side apply and managedFields, after sigs.k8s.io/structured-merge-diff: every write records which manager
// owns which fields (FieldsV1), an apply that changes a field owned by another manager is a conflict unless forced,
// and a field an applier stops applying is removed when nobody else owns it. Written here because no JavaScript
// package implements structured-merge-diff; list semantics come from schema.ts (merge keys for built-ins,
// x-kubernetes-list-type/-map-keys for custom resources).
import { now } from './clock.ts';
import { errors } from './errors.ts';
import { anySchema, type SchemaNode } from './schema.ts';
import type { K8sObject } from './store.ts';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const SEP = '\u0000';

/** A set of field paths; each path is PathElements (`f:name`, `k:{...}`, `v:...`) joined by NUL. */
export type FieldSet = Set<string>;

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

/** Defaults of list-map key fields: an applied `{containerPort: 80}` is the live `{containerPort: 80, protocol: TCP}`. */
const KEY_DEFAULTS: Record<string, unknown> = { protocol: 'TCP' };

function keyElement(item: Obj, keys: string[]): string {
  const k: Obj = {};
  for (const f of [...keys].sort()) {
    const v = item[f] ?? KEY_DEFAULTS[f];
    if (v !== undefined) k[f] = v;
  }
  return `k:${JSON.stringify(k)}`;
}

/** What a write can own: no identity or system metadata; status only through the status subresource. */
export function ownable(obj: Obj, scope: 'main' | 'status', hasStatusSubresource: boolean): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k === 'metadata') {
      if (scope === 'status') continue;
      const m: Obj = {};
      for (const f of ['labels', 'annotations', 'finalizers', 'ownerReferences']) if (v?.[f] !== undefined) m[f] = v[f];
      if (Object.keys(m).length) out.metadata = m;
      continue;
    }
    if (hasStatusSubresource) {
      if (scope === 'status' && k !== 'status') continue;
      if (scope === 'main' && k === 'status') continue;
    }
    out[k] = v;
  }
  return out;
}

export function fieldsOf(value: unknown, schema: SchemaNode): FieldSet {
  const out: FieldSet = new Set();
  collect(value, schema, '', out);
  return out;
}

function join(prefix: string, el: string): string {
  return prefix ? `${prefix}${SEP}${el}` : el;
}

function collect(value: unknown, schema: SchemaNode, prefix: string, out: FieldSet): void {
  if (isObj(value) && schema.kind !== 'scalar' && schema.kind !== 'list') {
    const entries = Object.entries(value);
    if (!entries.length && prefix) {
      out.add(prefix);
      return;
    }
    for (const [k, v] of entries) {
      const p = join(prefix, `f:${k}`);
      const cs = schema.field(k) ?? anySchema;
      if (v === null || v === undefined) out.add(p);
      else collect(v, cs, p, out);
    }
    return;
  }
  if (Array.isArray(value) && (schema.kind === 'list' || schema.kind === 'any')) {
    const sem = schema.kind === 'list' ? schema.list() : { type: 'atomic' as const };
    if (sem.type === 'set') {
      if (!value.length) out.add(prefix);
      for (const x of value) out.add(join(prefix, `v:${JSON.stringify(x)}`));
      return;
    }
    if (sem.type === 'map') {
      if (!value.length) out.add(prefix);
      for (const item of value) {
        if (!isObj(item)) continue;
        const p = join(prefix, keyElement(item, sem.keys));
        out.add(p);
        collect(item, schema.item(), p, out);
      }
      return;
    }
  }
  if (prefix) out.add(prefix);
}

/** The FieldsV1 JSON of a set. */
export function toFieldsV1(set: FieldSet): Obj {
  const root: Obj = {};
  const members: Obj[] = [];
  for (const path of [...set].sort()) {
    let node = root;
    for (const el of path.split(SEP)) {
      node[el] ??= {};
      node = node[el];
    }
    members.push(node);
    if (path.split(SEP).at(-1)!.startsWith('k:')) node['.'] = {};
  }
  // A member that also has members below it is marked with "."; leaves stay {}.
  for (const n of members) if (Object.keys(n).some((k) => k !== '.')) n['.'] = {};
  return root;
}

export function fromFieldsV1(f: Obj | undefined): FieldSet {
  const out: FieldSet = new Set();
  const walk = (node: Obj, prefix: string) => {
    for (const [k, v] of Object.entries(node)) {
      if (k === '.') {
        if (prefix) out.add(prefix);
        continue;
      }
      const p = join(prefix, k);
      if (!isObj(v) || !Object.keys(v).length) out.add(p);
      else walk(v, p);
    }
  };
  if (isObj(f)) walk(f, '');
  return out;
}

/** The value at a path (undefined when absent). */
export function valueAt(obj: unknown, path: string): unknown {
  let cur: any = obj;
  for (const el of path.split(SEP)) {
    if (cur === undefined || cur === null) return undefined;
    if (el.startsWith('f:')) cur = isObj(cur) ? cur[el.slice(2)] : undefined;
    else if (el.startsWith('k:')) {
      const key = JSON.parse(el.slice(2));
      cur = Array.isArray(cur)
        ? cur.find((x) => isObj(x) && Object.entries(key).every(([k, v]) => (x[k] ?? KEY_DEFAULTS[k]) === v))
        : undefined;
    } else if (el.startsWith('v:')) {
      const v = JSON.parse(el.slice(2));
      cur = Array.isArray(cur) && cur.some((x) => JSON.stringify(x) === JSON.stringify(v)) ? v : undefined;
    } else return undefined;
  }
  return cur;
}

function removeAt(obj: Obj, path: string): void {
  const els = path.split(SEP);
  let cur: any = obj;
  for (let i = 0; i < els.length - 1; i++) {
    cur = valueAt(cur, els[i]);
    if (cur === undefined || cur === null) return;
  }
  const last = els.at(-1)!;
  if (last.startsWith('f:') && isObj(cur)) delete cur[last.slice(2)];
  else if (last.startsWith('k:') && Array.isArray(cur)) {
    const key = JSON.parse(last.slice(2));
    const idx = cur.findIndex(
      (x) => isObj(x) && Object.entries(key).every(([k, v]) => (x[k] ?? KEY_DEFAULTS[k]) === v),
    );
    if (idx >= 0) cur.splice(idx, 1);
  } else if (last.startsWith('v:') && Array.isArray(cur)) {
    const v = last.slice(2);
    const idx = cur.findIndex((x) => JSON.stringify(x) === v);
    if (idx >= 0) cur.splice(idx, 1);
  }
}

/** Removes emptied parents left by removals (an object whose last field went away). */
function pruneEmpty(obj: Obj, path: string): void {
  const els = path.split(SEP);
  for (let n = els.length - 1; n > 0; n--) {
    const parentPath = els.slice(0, n).join(SEP);
    const v = valueAt(obj, parentPath);
    if (isObj(v) && !Object.keys(v).length && els[n - 1].startsWith('f:')) removeAt(obj, parentPath);
    else break;
  }
}

/** Deep-merges an applied configuration into the live object with list semantics (apply's merge). */
export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode): unknown {
  if (isObj(applied) && schema.kind !== 'scalar' && schema.kind !== 'list') {
    const out: Obj = isObj(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) {
        delete out[k];
        continue;
      }
      out[k] = mergeApplied(out[k], v, schema.field(k) ?? anySchema);
    }
    return out;
  }
  if (Array.isArray(applied) && schema.kind === 'list') {
    const sem = schema.list();
    const base = Array.isArray(live) ? live : [];
    if (sem.type === 'set') {
      const out = [...applied];
      for (const x of base) if (!out.some((y) => JSON.stringify(y) === JSON.stringify(x))) out.push(x);
      return out;
    }
    if (sem.type === 'map') {
      const id = (x: unknown) => (isObj(x) ? keyElement(x, sem.keys) : JSON.stringify(x));
      const liveById = new Map(base.map((x) => [id(x), x]));
      const appliedIds = new Set(applied.map(id));
      const out = applied.map((x) => mergeApplied(liveById.get(id(x)), x, schema.item()));
      for (const x of base) if (!appliedIds.has(id(x))) out.push(x);
      return out;
    }
  }
  return structuredClone(applied);
}

function readEntries(obj: K8sObject): ManagedFieldsEntry[] {
  return Array.isArray(obj.metadata.managedFields) ? obj.metadata.managedFields : [];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function sortedEntries(list: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  return list.filter((e) => Object.keys(e.fieldsV1).length);
}

/**
 * Server-side apply: merges `applied` (an apply configuration) into `live` (may be undefined: create) and returns
 * the new object with updated managedFields. Throws 409 Conflict listing the fields other managers own, unless force.
 */
export function serverSideApply(opts: {
  live: K8sObject | undefined;
  applied: K8sObject;
  manager: string;
  force: boolean;
  schema: SchemaNode;
  apiVersion: string;
  subresource?: 'status';
  hasStatusSubresource: boolean;
  group: string;
  resource: string;
}): K8sObject {
  const { live, applied, manager, schema, subresource } = opts;
  const scope = subresource === 'status' ? 'status' : 'main';
  const appliedOwnable = ownable(applied, scope, opts.hasStatusSubresource);
  const appliedSet = fieldsOf(appliedOwnable, schema);
  const entries = live ? readEntries(live).map((e) => ({ ...e })) : [];
  const isMine = (e: ManagedFieldsEntry) =>
    e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === (subresource ?? '');
  const mine = entries.find(isMine);
  const prevSet = mine ? fromFieldsV1(mine.fieldsV1) : new Set<string>();

  // Conflicts: fields another manager owns whose live value differs from the applied one.
  const conflicts: { manager: string; field: string; entry: ManagedFieldsEntry; path: string }[] = [];
  const otherSets = new Map<ManagedFieldsEntry, FieldSet>();
  for (const e of entries) {
    if (isMine(e)) continue;
    if ((e.subresource ?? '') !== (subresource ?? '') && !(e.subresource === undefined && scope === 'main')) {
      // Status-subresource owners never conflict with main-resource applies and vice versa.
      if (!(scope === 'main' && e.subresource !== 'status')) continue;
    }
    const set = fromFieldsV1(e.fieldsV1);
    otherSets.set(e, set);
    if (!live) continue;
    for (const p of appliedSet) {
      if (!set.has(p)) continue;
      const last = p.split(SEP).at(-1)!;
      if (last.startsWith('k:') || last.startsWith('v:')) continue;
      if (!same(valueAt(live, p), valueAt(appliedOwnable, p)))
        conflicts.push({ manager: managerLabel(e), field: prettyPath(p), entry: e, path: p });
    }
  }
  if (conflicts.length && !opts.force) {
    throw errors.applyConflict(
      opts.group,
      opts.resource,
      applied.metadata.name ?? '',
      conflicts.map((c) => ({ manager: c.manager, field: c.field })),
    );
  }
  for (const c of conflicts) {
    const set = otherSets.get(c.entry)!;
    set.delete(c.path);
    c.entry.fieldsV1 = toFieldsV1(set);
  }

  // Start from live; drop what this manager applied before and no longer applies, unless someone else owns it.
  const base: Obj = live ? structuredClone(live) : { apiVersion: applied.apiVersion, kind: applied.kind, metadata: {} };
  const removed = [...prevSet].filter((p) => !appliedSet.has(p));
  removed.sort((a, b) => b.split(SEP).length - a.split(SEP).length);
  for (const p of removed) {
    let ownedElsewhere = false;
    for (const set of otherSets.values()) if (set.has(p)) ownedElsewhere = true;
    if (ownedElsewhere) continue;
    removeAt(base, p);
    pruneEmpty(base, p);
  }
  const merged = mergeApplied(base, appliedOwnable, schema) as K8sObject;
  merged.apiVersion = applied.apiVersion ?? base.apiVersion;
  merged.kind = applied.kind ?? base.kind;
  merged.metadata = { ...(merged.metadata ?? {}) };
  if (!live) {
    for (const f of ['name', 'namespace', 'generateName'])
      if (applied.metadata[f]) merged.metadata[f] = applied.metadata[f];
  }

  const time = now();
  const next = entries.filter((e) => !isMine(e));
  next.push({
    manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: toFieldsV1(appliedSet),
    ...(subresource ? { subresource } : {}),
  });
  merged.metadata.managedFields = sortedEntries(next);
  return merged;
}

/**
 * managedFields after a non-apply write (create, update, patch) by `manager`: it takes ownership of every field it
 * set or changed, and those fields leave other managers' sets.
 */
export function updateManagedFields(opts: {
  old: K8sObject | undefined;
  next: K8sObject;
  manager: string;
  schema: SchemaNode;
  apiVersion: string;
  subresource?: 'status';
  hasStatusSubresource: boolean;
}): ManagedFieldsEntry[] {
  const scope = opts.subresource === 'status' ? 'status' : 'main';
  const newO = ownable(opts.next, scope, opts.hasStatusSubresource);
  const oldO = opts.old ? ownable(opts.old, scope, opts.hasStatusSubresource) : {};
  const newSet = fieldsOf(newO, opts.schema);
  const oldSet = opts.old ? fieldsOf(oldO, opts.schema) : new Set<string>();
  const changed = new Set<string>();
  for (const p of newSet) if (!oldSet.has(p) || !same(valueAt(oldO, p), valueAt(newO, p))) changed.add(p);
  const removedPaths = [...oldSet].filter((p) => !newSet.has(p));
  const entries = (opts.old ? readEntries(opts.old) : []).map((e) => ({ ...e }));
  const isMine = (e: ManagedFieldsEntry) =>
    e.manager === opts.manager && e.operation === 'Update' && (e.subresource ?? '') === (opts.subresource ?? '');
  let mineSet = new Set<string>();
  const out: ManagedFieldsEntry[] = [];
  for (const e of entries) {
    const set = fromFieldsV1(e.fieldsV1);
    if (isMine(e)) {
      mineSet = set;
      continue;
    }
    let touched = false;
    for (const p of [...changed, ...removedPaths]) if (set.delete(p)) touched = true;
    // Items or parents that no longer exist leave the set.
    for (const p of [...set]) {
      if (!newSet.has(p) && (e.subresource ?? '') === (opts.subresource ?? '')) {
        set.delete(p);
        touched = true;
      }
    }
    out.push(touched ? { ...e, fieldsV1: toFieldsV1(set) } : e);
  }
  for (const p of changed) mineSet.add(p);
  for (const p of removedPaths) mineSet.delete(p);
  for (const p of [...mineSet]) if (!newSet.has(p)) mineSet.delete(p);
  if (!opts.old) for (const p of newSet) mineSet.add(p);
  if (mineSet.size) {
    out.push({
      manager: opts.manager,
      operation: 'Update',
      apiVersion: opts.apiVersion,
      time: now(),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(mineSet),
      ...(opts.subresource ? { subresource: opts.subresource } : {}),
    });
  }
  return sortedEntries(out);
}

/** How Kubernetes names a manager in conflict messages: `"kubectl-client-side-apply" using apps/v1`. */
function managerLabel(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion}`;
  return s;
}

/** `.spec.replicas`, `.spec.containers[name="x"].image` — how Kubernetes prints a path in conflict messages. */
export function prettyPath(p: string): string {
  return p
    .split(SEP)
    .map((el) => {
      if (el.startsWith('f:')) return `.${el.slice(2)}`;
      if (el.startsWith('k:')) {
        const k = JSON.parse(el.slice(2));
        return `[${Object.entries(k)
          .map(([a, b]) => `${a}=${JSON.stringify(b)}`)
          .join(',')}]`;
      }
      if (el.startsWith('v:')) return `[${el.slice(2)}]`;
      return el;
    })
    .join('');
}
