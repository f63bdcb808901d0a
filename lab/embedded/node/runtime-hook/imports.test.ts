// The pod runtime hook loads into every Node process of every pod (NODE_OPTIONS=--import), before the program: it
// may import node builtins and its own folder only, so a pod never pays for, or breaks on, a lab dependency.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const HERE = import.meta.dirname;
const SOURCES = readdirSync(HERE).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('runtime-hook imports', () => {
  it('are node builtins or files of this folder', () => {
    expect(SOURCES).toContain('pod-hook.ts');
    const bad: string[] = [];
    for (const f of SOURCES) {
      const text = readFileSync(`${HERE}/${f}`, 'utf8');
      for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm)) {
        const spec = m[1];
        if (spec.startsWith('node:') || /^\.\/[^/]+\.ts$/.test(spec)) continue;
        bad.push(`${f}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
