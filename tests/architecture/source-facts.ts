// What the architecture tests read of the source: every file's imports (static, type-only, re-exports, dynamic
// import()) and every function's length, parsed with TypeScript's own parser (the typescript package's API, which
// runs the tsgo compiler; `noResolve`, so only the files given are parsed). Files are given as text under
// repository-relative paths, so a test can hand it the tree or a small broken fixture alike.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { type Node, type SourceFile, SyntaxKind } from 'typescript/unstable/ast';
import { createVirtualFileSystem } from 'typescript/unstable/fs';
import { API } from 'typescript/unstable/sync';

export interface ImportEdge {
  /** The importing file, repository-relative. */
  from: string;
  /** A relative specifier resolved to a repository-relative path; a package specifier as written. */
  to: string;
  typeOnly: boolean;
  line: number;
}

export interface FunctionSize {
  file: string;
  /** The declared name, or the variable, property or class member it is assigned to; `<anonymous>` otherwise. */
  name: string;
  line: number;
  lines: number;
}

export interface SourceFacts {
  imports: ImportEdge[];
  functions: FunctionSize[];
  /** File → its number of lines. */
  lines: Record<string, number>;
}

const ROOT = '/repo';

/** Parses the files (repository-relative path → text). Spawns the compiler for the call and stops it after. */
export function readSourceFacts(files: Record<string, string>): SourceFacts {
  const names = Object.keys(files).sort();
  const tsconfig = {
    compilerOptions: { noResolve: true, noLib: true, types: [], allowImportingTsExtensions: true, noEmit: true },
    files: names,
  };
  const vfs: Record<string, string> = { [`${ROOT}/tsconfig.json`]: JSON.stringify(tsconfig) };
  for (const n of names) vfs[`${ROOT}/${n}`] = files[n];
  const api = new API({ cwd: ROOT, fs: createVirtualFileSystem(vfs) });
  try {
    const snapshot = api.updateSnapshot({ openProject: `${ROOT}/tsconfig.json` });
    const program = snapshot.getProject(`${ROOT}/tsconfig.json`)!.program;
    const facts: SourceFacts = { imports: [], functions: [], lines: {} };
    for (const n of names) {
      const sf = program.getSourceFile(`${ROOT}/${n}`);
      if (!sf) throw new Error(`${n}: not parsed`);
      facts.lines[n] = sf.getLineStarts().length - (sf.text.endsWith('\n') ? 1 : 0);
      facts.imports.push(...importsOf(n, sf));
      facts.functions.push(...functionsOf(n, sf));
    }
    return facts;
  } finally {
    api.close();
  }
}

/** The TypeScript files under `dirs` (repository-relative), read from the checkout at `root`. */
export function readTree(root: string, dirs: string[], opts: { tests?: boolean } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = posix.join(rel, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(p);
      } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && (opts.tests || !e.name.endsWith('.test.ts'))) {
        out[p] = readFileSync(join(root, p), 'utf8');
      }
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

function lineOf(sf: SourceFile, pos: number): number {
  const starts = sf.getLineStarts();
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function importsOf(file: string, sf: SourceFile): ImportEdge[] {
  return sf.imports.map((spec) => {
    const text = (spec as Node & { text: string }).text;
    const to = text.startsWith('.') ? posix.normalize(posix.join(dirname(file), text)) : text;
    return { from: file, to, typeOnly: isTypeOnly(spec.parent), line: lineOf(sf, spec.getStart(sf)) };
  });
}

/** `import type ...`, `export type ... from`, or an import whose every named binding is `type`. */
function isTypeOnly(decl: Node): boolean {
  const d = decl as Node & {
    isTypeOnly?: boolean;
    importClause?: {
      isTypeOnly?: boolean;
      name?: Node;
      namedBindings?: { kind: SyntaxKind; elements?: readonly { isTypeOnly?: boolean }[] };
    };
  };
  if (decl.kind === SyntaxKind.ExportDeclaration) return !!d.isTypeOnly;
  if (decl.kind !== SyntaxKind.ImportDeclaration || !d.importClause) return false;
  const c = d.importClause;
  if (c.isTypeOnly) return true;
  const els = c.namedBindings?.elements;
  return !c.name && !!els?.length && els.every((e) => e.isTypeOnly);
}

const FUNCTION_KINDS = new Set([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

function functionsOf(file: string, sf: SourceFile): FunctionSize[] {
  const out: FunctionSize[] = [];
  const visit = (n: Node): void => {
    if (FUNCTION_KINDS.has(n.kind)) {
      const line = lineOf(sf, n.getStart(sf));
      out.push({ file, name: nameOf(n), line, lines: lineOf(sf, n.end) - line + 1 });
    }
    n.forEachChild(visit);
  };
  visit(sf);
  return out;
}

function nameOf(n: Node): string {
  if (n.kind === SyntaxKind.Constructor) return `${nameOf(n.parent)}.constructor`;
  const own = (n as Node & { name?: Node & { text?: string } }).name?.text;
  const holder = (n.parent as Node & { name?: Node & { text?: string } }).name?.text;
  const member = n.kind === SyntaxKind.MethodDeclaration || n.kind === SyntaxKind.GetAccessor;
  if (own && member) return `${nameOf(n.parent)}.${own}`;
  return own ?? holder ?? '<anonymous>';
}
