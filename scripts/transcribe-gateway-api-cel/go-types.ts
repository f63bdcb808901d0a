// The upstream API packages as the transcriber needs them (scripts/transcribe-gateway-api-cel.ts): each Go field's
// JSON name (its `json:"..."` tag; inline structs merge), each struct's fields with their omitempty/omitzero, the
// named scalar types, and the packages' string and integer constants; and what encoding/json writes for fields a
// literal leaves out (their zero values).

export interface StructField {
  go: string;
  json: string;
  type: string;
  omitempty: boolean;
  omitzero: boolean;
}

// metav1 (not in the API packages): the object's metadata fields the tests set.
export const jsonName = new Map<string, string>([
  ['ObjectMeta', 'metadata'],
  ['TypeMeta', ''],
  ['Labels', 'labels'],
  ['Annotations', 'annotations'],
]);
export const structs = new Map<string, StructField[]>();
const scalarTypes = new Map<string, string>();
export const consts = new Map<string, string | number>([
  ['NamespaceDefault', 'default'],
  ['GroupName', ''],
]);

/** Reads one Go source file of the API packages. */
export function readApiSource(src: string): void {
  for (const m of src.matchAll(/^type (\w+) (string|bool|u?int\d*|float\d+)\s*$/gm)) scalarTypes.set(m[1], m[2]);
  for (const m of src.matchAll(/^type (\w+) struct \{\n([\s\S]*?)\n\}/gm)) {
    const fields: StructField[] = [];
    for (const f of m[2].matchAll(/^\t(\w+)\s+([^\s`]+)\s+`json:"([^"]*)"/gm)) {
      const [jn, ...o] = f[3].split(',');
      fields.push({
        go: f[1],
        json: jn,
        type: f[2],
        omitempty: o.includes('omitempty'),
        omitzero: o.includes('omitzero'),
      });
    }
    structs.set(m[1], fields);
  }
  for (const m of src.matchAll(/^\s+(\w+)\s+[^\n`]*`json:"([^"]*)"/gm)) {
    const name = m[2].split(',')[0];
    if (!jsonName.has(m[1])) jsonName.set(m[1], name);
  }
  for (const m of src.matchAll(/^\s*(\w+)\s+(?:\w+\s+)?=\s*"([^"]*)"/gm)) if (!consts.has(m[1])) consts.set(m[1], m[2]);
  for (const m of src.matchAll(/^\s*(\w+)\s+(?:\w+\s+)?=\s*(\d+)\s*$/gm))
    if (!consts.has(m[1])) consts.set(m[1], Number(m[2]));
}

/** What encoding/json writes for a field that a literal leaves out: its zero value unless omitempty (or a
 * pointer, slice or map, whose nil the API server drops as a null of a non-nullable field). */
export function zeroOf(type: string): unknown {
  if (/^(\*|\[\]|map\[)/.test(type)) return undefined;
  const t = type.split('.').at(-1)!;
  const base = scalarTypes.get(t) ?? t;
  if (base === 'string') return '';
  if (base === 'bool') return false;
  if (/^(u?int\d*|float\d+)$/.test(base)) return 0;
  if (structs.has(t)) return withZeros(t, {});
  return undefined;
}

/** A struct literal's object with the zero values of the fields it leaves out. */
export function withZeros(type: string, o: Record<string, unknown>): Record<string, unknown> {
  for (const f of structs.get(type) ?? []) {
    // omitempty leaves struct values in (encoding/json); omitzero drops them.
    const isStruct = structs.has(f.type.split('.').at(-1)!) && !/^(\*|\[\]|map\[)/.test(f.type);
    if (f.omitzero || (f.omitempty && !isStruct)) continue;
    if (f.json === '') {
      const inner = zeroOf(f.type);
      if (inner && typeof inner === 'object') for (const [k, v] of Object.entries(inner)) if (!(k in o)) o[k] = v;
      continue;
    }
    if (f.json === '-' || f.json in o) continue;
    const z = zeroOf(f.type);
    if (z !== undefined) o[f.json] = z;
  }
  return o;
}
