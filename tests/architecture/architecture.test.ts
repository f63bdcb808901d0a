// The import rules of ARCHITECTURE.md and the control plane's layering (issue 11), checked on the tree as it is:
// system/ never imports lab/ (system/ is what goes into the image; its tests included), the IR does not import xDS,
// the pure xDS translator does not import the serving side (snapshot cache, ADS server), no import cycles in the
// control plane, in explain or in the embedded cluster, and no file of the control plane or the embedded cluster over
// 600 lines or function over 120. Imports are read with TypeScript's own parser (source-facts.ts). A broken fixture
// shows that each rule catches what it is meant to.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { brokenImports, type ImportRule, importCycles, oversized } from './rules.ts';
import { readSourceFacts, readTree, type SourceFacts } from './source-facts.ts';

const REPO = join(import.meta.dirname, '..', '..');
const CP = 'system/controlplane/';

const RULES: ImportRule[] = [
  { from: 'system/', to: 'lab/', why: 'system/ is the image; lab/ is the clusters it runs in' },
  {
    from: `${CP}ir/`,
    to: `${CP}xds/`,
    why: 'the IR knows no Envoy types: the translator reads the IR, not the reverse',
  },
  {
    from: `${CP}xds/translator/`,
    to: `${CP}serve/`,
    why: 'the translator is pure, below the pipeline; the cache and the ADS server serve what it made',
  },
];
const EMBEDDED = 'lab/embedded/';
const CYCLE_FREE = [CP, 'lab/tools/explain/', EMBEDDED];
const SIZED = [CP, EMBEDDED];
const LIMITS = { fileLines: 600, functionLines: 120 };

function violations(facts: SourceFacts) {
  return {
    imports: RULES.flatMap((r) =>
      brokenImports(facts.imports, r).map((e) => `${e.from}:${e.line} imports ${e.to} (${r.why})`),
    ),
    cycles: CYCLE_FREE.flatMap((under) => importCycles(facts.imports, under)),
    sizes: SIZED.map((under) => oversized(facts, under, LIMITS)).reduce((a, b) => ({
      files: [...a.files, ...b.files],
      functions: [...a.functions, ...b.functions],
    })),
  };
}

describe('the tree keeps the import rules', () => {
  let facts: SourceFacts;
  beforeAll(() => {
    facts = readSourceFacts(readTree(REPO, ['system', 'lab/tools/explain', 'lab/embedded'], { tests: true }));
  });

  it('reads the imports it judges (static, type-only and dynamic, resolved to repository paths)', () => {
    const from = (f: string) => facts.imports.filter((e) => e.from === f).map((e) => e.to);
    expect(from(`${CP}pipeline.ts`)).toEqual(
      expect.arrayContaining([`${CP}ir/gateway.ts`, `${CP}xds/translator/gateway.ts`, `${CP}krt/collection.ts`]),
    );
    expect(from(`${CP}serve/cache.ts`)).toContain(`${CP}pipeline.ts`);
    expect(facts.imports.some((e) => e.typeOnly)).toBe(true);
    expect(Object.keys(facts.lines).filter((f) => f.startsWith(CP)).length).toBeGreaterThan(40);
  });

  it('system/ ↛ lab/, ir/ ↛ xds/, xds/translator/ ↛ serve/', () => {
    expect(violations(facts).imports).toEqual([]);
  });

  it('no import cycle in system/controlplane, lab/tools/explain or lab/embedded', () => {
    expect(violations(facts).cycles).toEqual([]);
  });

  it('no control plane or embedded cluster file over 600 lines, no function over 120', () => {
    expect(violations(facts).sizes).toEqual({ files: [], functions: [] });
  });
});

describe('each rule catches a broken fixture', () => {
  // 121 lines, one over the limit; and 120, at it.
  const fn = (name: string, body: number) =>
    `export function ${name}(): number {\n${'  let x = 1;\n'.repeat(body)}  return 1;\n}\n`;
  const functions = fn('long', 118) + fn('atTheLimit', 117);
  const fixture = {
    // ir → xds (and with c.ts below, a cycle a → b → c → a, one edge of it type-only)
    [`${CP}ir/a.ts`]: "import { b } from '../xds/translator/b.ts';\nexport const a = b;\n",
    // translator → serve
    [`${CP}xds/translator/b.ts`]: "import type { C } from '../../serve/c.ts';\nexport const b: C = 1;\n",
    // serve → ir is allowed; a dynamic import of lab/ is not
    [`${CP}serve/c.ts`]:
      "import { a } from '../ir/a.ts';\nexport type C = number;\nexport const c = () => import('../../../lab/d.ts');\n" +
      "// import { x } from '../../../lab/in-a-comment.ts';\nexport const s = `import('../../../lab/in-a-string.ts')`;\n" +
      'export const z = a;\n',
    [`${CP}big.ts`]: `${functions}${'// filler\n'.repeat(601 - (functions.split('\n').length - 1))}`,
    'system/proxy/e.test.ts': "import { d } from '../../lab/d.ts';\nexport const e = d;\n",
    'lab/d.ts': 'export const d = 1;\n',
    'lab/tools/explain/x.ts': "import type { Y } from './y.ts';\nexport type X = Y;\n",
    'lab/tools/explain/y.ts': "import type { X } from './x.ts';\nexport type Y = X | 1;\n",
    'lab/embedded/node/p.ts': "import { q } from '../q.ts';\nexport const p = q;\n",
    'lab/embedded/q.ts': `import type { P } from './node/p.ts';\nexport type Q = P;\nexport const q = 1;\n${fn('longToo', 118)}`,
  };
  let v: ReturnType<typeof violations>;
  beforeAll(() => {
    v = violations(readSourceFacts(fixture));
  });

  it('finds each forbidden import, and only those (not in comments or strings)', () => {
    expect(v.imports).toEqual([
      `${CP}serve/c.ts:3 imports lab/d.ts (${RULES[0].why})`,
      `system/proxy/e.test.ts:1 imports lab/d.ts (${RULES[0].why})`,
      `${CP}ir/a.ts:1 imports ${CP}xds/translator/b.ts (${RULES[1].why})`,
      `${CP}xds/translator/b.ts:1 imports ${CP}serve/c.ts (${RULES[2].why})`,
    ]);
  });

  it('finds the cycles, type-only imports included', () => {
    expect(v.cycles).toEqual([
      [`${CP}ir/a.ts`, `${CP}serve/c.ts`, `${CP}xds/translator/b.ts`],
      ['lab/tools/explain/x.ts', 'lab/tools/explain/y.ts'],
      ['lab/embedded/node/p.ts', 'lab/embedded/q.ts'],
    ]);
  });

  it('finds the file over 600 lines and the function over 120', () => {
    expect(v.sizes.files).toEqual([{ file: `${CP}big.ts`, lines: 601 }]);
    expect(v.sizes.functions.map((f) => `${f.file}:${f.line} ${f.name} ${f.lines}`)).toEqual([
      `${CP}big.ts:1 long 121`,
      'lab/embedded/q.ts:4 longToo 121',
    ]);
  });
});
