// How one TrafficPolicy field's value is merged onto another's when the higher-priority policy asks for it with
// `spec.mergeType` (attach-policies.ts decides who merges onto whom). Generic over the fields: it works on the spec's
// JSON (as written, before normalization, so a default the normalizer fills in never overrides a value set below),
// and the only per-field knowledge is the table of list sub-fields strategic merge merges instead of replacing.
//   - JSONMerge: RFC 7386 JSON Merge Patch, as Envoy Gateway's `mergeType: JSONMerge` (BackendTrafficPolicy,
//     ClientTrafficPolicy; api/v1alpha1 MergeType): objects merge member by member, recursively; a list or a scalar
//     of the patch replaces the base's; a null member deletes.
//   - StrategicMerge: Kubernetes strategic merge patch (apimachinery strategicpatch, as Envoy Gateway applies it):
//     the same, but a list named in STRATEGIC_LISTS merges — a keyed list (patchMergeKey) item by item, the patch's
//     item merged onto the base's item with the same key, new items appended after the base's; a set list
//     (primitives, patchStrategy merge) as the union, base order first. Every other list replaces.
// kgateway's deep merge (kgateway issue #11528, "policy deep merge for policy sub-fields") is this merge of sub-fields
// across policies: the API here says it per policy (mergeType) rather than by an annotation on the parent.

export const MERGE_TYPES = ['StrategicMerge', 'JSONMerge'] as const;
export type MergeType = (typeof MERGE_TYPES)[number];

/**
 * How strategic merge merges one list: `{ key }`, a list of objects keyed by that member (patchMergeKey), or
 * `{ set }`, a list of primitives merged as a set; `fold`: string keys or values compare case-insensitively (header
 * names).
 */
export type ListStrategy = { key: string; fold?: boolean } | { set: true; fold?: boolean };

/**
 * Lists strategic merge merges, by path from the policy's spec (`*` matches any member name): Gateway API's
 * HTTPHeaderFilter set/add are `+listType=map`, `+listMapKey=name`. A new field's lists replace until named here.
 */
export const STRATEGIC_LISTS: Record<string, ListStrategy> = {
  'headerModifiers.*.set': { key: 'name', fold: true },
  'headerModifiers.*.add': { key: 'name', fold: true },
  'headerModifiers.*.remove': { set: true, fold: true },
  'cors.allowOrigins': { set: true },
  'cors.allowMethods': { set: true },
  'cors.allowHeaders': { set: true, fold: true },
  'cors.exposeHeaders': { set: true, fold: true },
  'retry.retryOn': { set: true },
  'retry.statusCodes': { set: true },
  // Envoy's RBAC policies are a map keyed by name (config.rbac.v3.RBAC.policies).
  'rbac.policies': { key: 'name' },
  'compression.contentTypes': { set: true, fold: true },
  'transformation.*.set': { key: 'name', fold: true },
  'transformation.*.add': { key: 'name', fold: true },
  'transformation.*.remove': { set: true, fold: true },
};

/** Top-level fields that never merge (a reference resolved in the policy's own namespace): the winner's applies. A field
 * read with the world (not in policies.ts FIELD_SETTINGS) never merges either (attach-policies.ts mergeChain). */
export const ATOMIC_FIELDS: readonly string[] = ['extAuth', 'extProc'];

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function listStrategy(path: string[]): ListStrategy | undefined {
  for (const [pattern, s] of Object.entries(STRATEGIC_LISTS)) {
    const parts = pattern.split('.');
    if (parts.length === path.length && parts.every((p, i) => p === '*' || p === path[i])) return s;
  }
  return undefined;
}

function mergeList(base: Json[], patch: Json[], s: ListStrategy, path: string[], type: MergeType): Json[] {
  const same = (a: Json, b: Json) =>
    s.fold && typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;
  const out = [...base];
  for (const item of patch) {
    if ('set' in s) {
      if (!out.some((x) => same(x, item))) out.push(item);
      continue;
    }
    const k = isObject(item) ? item[s.key] : undefined;
    const i = out.findIndex((x) => isObject(x) && k !== undefined && same(x[s.key], k));
    if (i >= 0) out[i] = mergeValue(out[i], item, path, type);
    else out.push(item);
  }
  return out;
}

/** `patch` merged onto `base` (neither is changed); `path`: where they are, from the spec (first: the field). */
export function mergeValue(base: Json, patch: Json, path: string[], type: MergeType): Json {
  if (Array.isArray(patch) && Array.isArray(base) && type === 'StrategicMerge') {
    const s = listStrategy(path);
    if (s) return mergeList(base, patch, s, path, type);
  }
  if (!isObject(patch)) return patch;
  const out: Record<string, Json> = isObject(base) ? { ...base } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergeValue(out[k], v, [...path, k], type);
  }
  return out;
}

/** Whether a field's values can merge at all. */
export function mergeable(field: string): boolean {
  return !ATOMIC_FIELDS.includes(field);
}
