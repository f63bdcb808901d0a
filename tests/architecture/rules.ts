// The architecture's rules as pure functions over the source facts (source-facts.ts): imports one part of the tree
// may not make, a folder that may import only what it names, import cycles, and files or functions too long to read
// in one sitting.
import type { FunctionSize, ImportEdge, SourceFacts } from './source-facts.ts';

export interface ImportRule {
  /** Files whose path starts with this… */
  from: string;
  /** …import no file whose path starts with this. */
  to: string;
  why: string;
}

/** The imports that break the rule. */
export function brokenImports(edges: ImportEdge[], rule: ImportRule): ImportEdge[] {
  return edges.filter((e) => e.from.startsWith(rule.from) && e.to.startsWith(rule.to));
}

export interface ConfinedFolder {
  /** The production files under this folder (tests are not held to it)… */
  folder: string;
  /** …import only what starts with one of these: a repository path (a folder) or a package prefix such as `node:`. */
  only: string[];
  why: string;
}

/** The imports of the folder's production files that reach outside what it may import. */
export function importsOutside(edges: ImportEdge[], rule: ConfinedFolder): ImportEdge[] {
  return edges.filter(
    (e) => e.from.startsWith(rule.folder) && !isTest(e.from) && !rule.only.some((p) => e.to.startsWith(p)),
  );
}

/**
 * The import cycles among the files under `under` (type-only imports count: they tie the files together as much),
 * each as its files in path order; Tarjan's strongly connected components of more than one file, or a file that
 * imports itself.
 */
export function importCycles(edges: ImportEdge[], under: string): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!e.from.startsWith(under) || !e.to.startsWith(under)) continue;
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || next.get(v)?.has(v)) out.push(scc.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/**
 * Test helpers outside a `testing/` folder: a file named as a helper (`testing.ts`, `testbed.ts`, `<x>-testing.ts`,
 * `test-helpers.ts`, `test-utils.ts`) where the convention wants `testing/<what it gives>.ts` beside the code served.
 */
export function strayTestHelpers(files: string[]): string[] {
  return files
    .filter((f) => !/(^|\/)testing\//.test(f))
    .filter((f) => /(^|\/)(testing|testbed|test-?helpers?|test-?utils?|[\w-]+-testing)\.ts$/.test(f))
    .sort();
}

export interface SizeLimits {
  fileLines: number;
  functionLines: number;
}

/**
 * Production files under `under` longer than the limit, and functions longer than theirs. Test files are not judged,
 * nor the files named in `except` (generated tables, which nobody reads as code).
 */
export function oversized(
  facts: SourceFacts,
  under: string,
  limits: SizeLimits,
  except: readonly string[] = [],
): { files: { file: string; lines: number }[]; functions: FunctionSize[] } {
  const production = (f: string) => f.startsWith(under) && !isTest(f) && !except.includes(f);
  return {
    files: Object.entries(facts.lines)
      .filter(([f, n]) => production(f) && n > limits.fileLines)
      .map(([file, lines]) => ({ file, lines })),
    functions: facts.functions.filter((f) => production(f.file) && f.lines > limits.functionLines),
  };
}

function isTest(file: string): boolean {
  return file.endsWith('.test.ts');
}
