// The parsed Envoy protobuf root kept as JSON next to Node's compile cache (module.getCompileCacheDir(): system/main.ts
// turns it on, the lab points every pod and tool at one folder), so a process loads the root from JSON instead of
// parsing the same .proto files again. protobufjs' JSON round trip keeps types, fields and options but not
// `parsedOptions` (the structured custom options validate.ts reads, e.g. `(validate.rules)`), an enum's
// `valuesOptions` (its Enum.fromJSON drops them) nor the list of files loaded (which a later loadSync needs to skip
// them); those are stored beside it. The file's name carries a hash of what the root was
// built from (protobufjs and proto package versions, include folders, file list), so another checkout or version
// never reads it; it is written to a temporary name and renamed, so a reader never sees half of it. Without a compile
// cache, or on any read or write error, the caller simply parses the files.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { compileCacheFile } from '../compile-cache-file.ts';
import { writeFileWhole } from '../write-whole.ts';

/** Bumped when what is stored changes shape. */
const FORMAT = 2;

interface Stored {
  root: protobuf.INamespace;
  files: string[];
  /** fullName → parsedOptions, for every reflection object that has them. */
  parsedOptions: [string, unknown][];
  /** fullName → valuesOptions, for every enum that has them. */
  valuesOptions: [string, Record<string, Record<string, unknown>>][];
}

/** What every reflection object has at run time (protobufjs declares parsedOptions on some classes only). */
type WithOptions = { fullName: string; parsedOptions?: unknown };

const cacheFile = (inputs: unknown[]) => compileCacheFile('envoy-protos', 'json', [FORMAT, ...inputs]);

/** Every reflection object below (and including) `o`: namespaces, types, enums, services, fields, oneofs, methods. */
function* reflectionObjects(o: protobuf.ReflectionObject): Generator<protobuf.ReflectionObject> {
  yield o;
  if (o instanceof protobuf.Type) {
    yield* o.fieldsArray;
    yield* o.oneofsArray;
  }
  if (o instanceof protobuf.Service) yield* o.methodsArray;
  if (o instanceof protobuf.Namespace) for (const n of o.nestedArray) yield* reflectionObjects(n);
}

const withOptions = (o: protobuf.ReflectionObject) => o as unknown as WithOptions;

/** fullName → parsedOptions of every object of the root that has them (also what the equivalence test compares). */
export function parsedOptionsOf(root: protobuf.Root): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const o of reflectionObjects(root)) {
    const p = withOptions(o).parsedOptions;
    if (p) out.push([o.fullName, p]);
  }
  return out;
}

/** fullName → valuesOptions of every enum of the root that has them. */
export function valuesOptionsOf(root: protobuf.Root): Stored['valuesOptions'] {
  const out: Stored['valuesOptions'] = [];
  for (const o of reflectionObjects(root))
    if (o instanceof protobuf.Enum && o.valuesOptions) out.push([o.fullName, o.valuesOptions]);
  return out;
}

/** The cached root for these inputs (its fields resolved on use), or undefined when there is none (or it cannot be read). */
export function readCachedRoot(inputs: unknown[]): protobuf.Root | undefined {
  const file = cacheFile(inputs);
  if (!file) return undefined;
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Stored;
    // Root.fromJSON without its closing resolveAll() (below).
    const root = new protobuf.Root();
    if (stored.root.options) root.setOptions(stored.root.options);
    if (stored.root.nested) root.addJSON(stored.root.nested);
    root.files = stored.files;
    const options = new Map(stored.parsedOptions);
    const values = new Map(stored.valuesOptions);
    for (const o of reflectionObjects(root)) {
      const p = options.get(o.fullName);
      if (p) withOptions(o).parsedOptions = p;
      const v = o instanceof protobuf.Enum ? values.get(o.fullName) : undefined;
      if (v) (o as protobuf.Enum).valuesOptions = v;
    }
    // Not resolveAll(): resolving every field of the ~300 files' types up front cost each proxy and control plane start
    // ~45 ms of CPU; protobufjs resolves a type's fields when it first builds its codec, and this project's readers
    // call field.resolve() before they read resolvedType (protojson/reflection.ts resolvedTypeOf, validate.ts).
    return root;
  } catch {
    return undefined;
  }
}

/** Stores a root parsed for these inputs (best effort: a read-only or missing folder only costs the next parse). */
export function writeCachedRoot(inputs: unknown[], root: protobuf.Root): void {
  const file = cacheFile(inputs);
  if (!file) return;
  const stored: Stored = {
    root: root.toJSON(),
    files: root.files,
    parsedOptions: parsedOptionsOf(root),
    valuesOptions: valuesOptionsOf(root),
  };
  try {
    writeFileWhole(file, JSON.stringify(stored));
  } catch {
    // The folder is not writable here: parse again next time.
  }
}
