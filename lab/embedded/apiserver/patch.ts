// The patch verbs: JSON patch (RFC 6902, via fast-json-patch), JSON merge patch (RFC 7386) and strategic merge patch.
// Strategic merge patch is written here because no maintained JavaScript package implements it: it merges lists by the
// merge keys of the Kubernetes types (schema.ts) and honours the directives kubectl's three-way patches use
// ($patch: replace|delete|merge, $retainKeys, $setElementOrder/<list>, $deleteFromPrimitiveList/<list>).
import jsonpatch from 'fast-json-patch';
import { ApiError, errors } from './errors.ts';
import { anySchema, type SchemaNode } from './schema.ts';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw errors.badRequest('json patch must be a JSON array of operations');
  try {
    return jsonpatch.applyPatch(clone(doc), ops as jsonpatch.Operation[], true, true).newDocument;
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${msg}`);
  }
}

/** Applies a strategic merge patch to `original` (not modified) using the schema's list semantics. */
export function strategicMergePatch(original: unknown, patch: unknown, schema: SchemaNode): unknown {
  return mergeValue(clone(original), patch, schema);
}

function mergeValue(orig: unknown, patch: unknown, schema: SchemaNode): unknown {
  if (!isObj(patch)) return clone(patch);
  return mergeMap(isObj(orig) ? orig : {}, patch, schema);
}

function mergeMap(orig: Obj, patch: Obj, schema: SchemaNode): Obj | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') {
    const { $patch: _, ...rest } = patch;
    return stripDirectives(rest);
  }
  const out: Obj = orig;
  for (const [key, pv] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    const fs = schema.field(key) ?? anySchema;
    if (pv === null) {
      delete out[key];
      continue;
    }
    if (Array.isArray(pv) && fs.kind === 'list') {
      const order = patch[`$setElementOrder/${key}`];
      out[key] = mergeList(out[key], pv, fs, order);
    } else if (isObj(pv) && fs.kind !== 'scalar') {
      const r = fs.kind === 'any' ? jsonMergePatch(out[key], pv) : mergeMap(isObj(out[key]) ? out[key] : {}, pv, fs);
      if (r === undefined) delete out[key];
      else out[key] = r;
    } else {
      out[key] = clone(pv);
    }
  }
  for (const [key, pv] of Object.entries(patch)) {
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const f = key.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[f]) && Array.isArray(pv)) out[f] = out[f].filter((x: unknown) => !pv.includes(x));
    } else if (key.startsWith('$setElementOrder/')) {
      const f = key.slice('$setElementOrder/'.length);
      if (!(f in patch) && Array.isArray(out[f]) && Array.isArray(pv)) {
        const fs = schema.field(f) ?? anySchema;
        out[f] = reorder(out[f], pv, fs);
      }
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

function stripDirectives(v: unknown): any {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObj(v)) return v;
  const o: Obj = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) o[k] = stripDirectives(x);
  return o;
}

function mergeList(orig: unknown, patch: unknown[], schema: SchemaNode, order: unknown): unknown[] {
  const sem = schema.list();
  const base = Array.isArray(orig) ? orig : [];
  if (patch.some((x) => isObj(x) && x.$patch === 'replace' && Object.keys(x).length === 1)) {
    return stripDirectives(patch.filter((x) => !(isObj(x) && x.$patch === 'replace')));
  }
  if (sem.type === 'set') {
    const out = [...base];
    for (const x of patch) if (!out.includes(x)) out.push(x);
    return Array.isArray(order) ? reorder(out, order, schema) : out;
  }
  if (sem.type !== 'map') return stripDirectives(patch);
  const key = sem.mergeKey;
  const out = [...base];
  for (const item of patch) {
    if (!isObj(item)) {
      out.push(item);
      continue;
    }
    const idx = out.findIndex((x) => isObj(x) && x[key] === item[key]);
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) {
      const merged = mergeMap(out[idx], item, schema.item());
      if (merged === undefined) out.splice(idx, 1);
      else out[idx] = merged;
    } else {
      out.push(stripDirectives(item));
    }
  }
  return Array.isArray(order) ? reorder(out, order, schema) : out;
}

/** Orders a list by $setElementOrder: listed items first in that order, then the others in their order. */
function reorder(list: unknown[], order: unknown[], schema: SchemaNode): unknown[] {
  const sem = schema.list();
  const id = (x: unknown) => (sem.type === 'map' && isObj(x) ? JSON.stringify(x[sem.mergeKey]) : JSON.stringify(x));
  const pos = new Map(order.map((o, i) => [id(o), i]));
  const listed = list.filter((x) => pos.has(id(x))).sort((a, b) => pos.get(id(a))! - pos.get(id(b))!);
  const rest = list.filter((x) => !pos.has(id(x)));
  return [...listed, ...rest];
}
