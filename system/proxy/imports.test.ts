// The proxy's module rules, read from the import statements of its files (tests left out): no import cycle between
// its modules, and the filters see the connection manager only through filters/filter-api.ts (no module under
// filters/ imports from http/). Issue 11 found a 12-file cycle across http/, filters/ and config/, admin/ <-> server.ts
// and upstream/{cluster,pool,types}; this keeps them from coming back.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = dirname(fileURLToPath(import.meta.url));
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*'([^']+)'/g;

/** Every module of the proxy (path relative to system/proxy) with the proxy modules it imports. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(ROOT, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => f.split('\\').join('/'));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(join(ROOT, f), 'utf8');
    const out: string[] = [];
    for (const m of text.matchAll(SPECIFIER)) {
      if (!m[1]!.startsWith('.')) continue;
      const target = relative(ROOT, resolve(ROOT, dirname(f), m[1]!))
        .split('\\')
        .join('/');
      if (known.has(target)) out.push(target);
    }
    graph.set(f, out);
  }
  return graph;
}

/** The strongly connected components with more than one module, or a module importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || graph.get(v)!.includes(v)) found.push(scc.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the proxy module rules', () => {
  const graph = importGraph();

  it('reads the imports (the rules below are not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(30);
    expect(graph.get('http/hcm.ts')).toContain('http/active-stream.ts');
    expect(
      cycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['a.ts']],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });

  it('no import cycle between its modules', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('filters see the connection manager only through filters/filter-api.ts', () => {
    const intoHttp = [...graph]
      .filter(([f]) => f.startsWith('filters/'))
      .flatMap(([f, to]) => to.filter((t) => t.startsWith('http/')).map((t) => `${f} -> ${t}`));
    expect(intoHttp).toEqual([]);
  });
});
