// The import rules of ARCHITECTURE.md, the layering of the control plane and the proxy (issue 11) and the size limits,
// checked on the tree as it is; the one place these rules live. system/ never imports lab/ (system/ is what goes into
// the image; its tests included); the control plane and the proxy do not import each other (what both need, such as
// Envoy's format parser, lives in system/shared/; tests included); the IR does not import xDS; the pure xDS translator does not import the serving side
// (snapshot cache, ADS server); the control plane's pure stages (krt/ → ir/ → xds/translator/) import no stage after
// them nor what runs them (informers, serving, statuses, deployer, admin, the pipeline); the proxy's filters see the
// connection manager only through filters/filter-api.ts; the pod runtime hook imports node builtins and its own folder
// only; no import cycle anywhere (system/, lab/, scripts/, bench/, scenarios/, conformance/, tests/); no production
// file over 600 lines or function over 120; test helpers in a testing/ folder, by no other name (testing.ts,
// testbed.ts...). Imports are read with TypeScript's own parser (source-facts.ts). A broken fixture shows that each
// rule catches what it is meant to.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  brokenImports,
  type ConfinedFolder,
  type ImportRule,
  importCycles,
  importsOutside,
  oversized,
  strayTestHelpers,
} from './rules.ts';
import { readSourceFacts, readTree, type SourceFacts } from './source-facts.ts';

const REPO = join(import.meta.dirname, '..', '..');
const CP = 'system/controlplane/';
const PROXY = 'system/proxy/';
const HOOK = 'lab/embedded/node/runtime-hook/';

const NAMED_RULES: ImportRule[] = [
  { from: 'system/', to: 'lab/', why: 'system/ is the image; lab/ is the clusters it runs in' },
  {
    from: CP,
    to: PROXY,
    why: 'the control plane and the proxy are separate components: what both need lives in system/shared/',
  },
  {
    from: PROXY,
    to: CP,
    why: 'the control plane and the proxy are separate components: what both need lives in system/shared/',
  },
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
  {
    from: `${PROXY}filters/`,
    to: `${PROXY}http/`,
    why: 'filters see the connection manager only through filters/filter-api.ts, the stream handle ActiveStream implements',
  },
];
/**
 * The control plane's pure stages in data-flow order (collections → IR → xDS translator), and what runs them or
 * takes what they make (the informers, the serving side, statuses, the deployer, the admin server, the pipeline that
 * wires them): a pure stage imports no stage after it and nothing of those, so an HTTPRoute's walk from informer to
 * ADS response passes through the folders in one direction.
 */
const PURE_STAGES = [`${CP}krt/`, `${CP}ir/`, `${CP}xds/translator/`];
const RUNS_THE_STAGES = ['kube/', 'serve/', 'status/', 'deployer/', 'admin/', 'pipeline.ts', 'controlplane.ts'].map(
  (p) => `${CP}${p}`,
);
const STAGE_RULES: ImportRule[] = PURE_STAGES.flatMap((from, i) => [
  ...PURE_STAGES.slice(i + 1).map((to) => ({
    from,
    to,
    why: 'a pure stage imports the stages before it, never one after it',
  })),
  ...RUNS_THE_STAGES.map((to) => ({
    from,
    to,
    why: 'a pure stage knows nothing of what runs it or serves what it makes',
  })),
]);
/** The named rules, then the stage rules a named one does not already cover. */
const RULES: ImportRule[] = [
  ...NAMED_RULES,
  ...STAGE_RULES.filter((r) => !NAMED_RULES.some((n) => n.from === r.from && r.to.startsWith(n.to))),
];
const CONFINED: ConfinedFolder[] = [
  {
    folder: HOOK,
    only: ['node:', HOOK],
    why: 'the hook loads into every pod process (NODE_OPTIONS=--import) before the program: a pod never pays for, or breaks on, a lab dependency',
  },
];
/** Everything read; a cycle is looked for across all of it, so one between two folders is found too. */
const READ = ['system', 'lab', 'scripts', 'bench', 'scenarios', 'conformance', 'tests'];
/** Production code held to the size limits (tests are not: a test file reads as a list of cases). */
const SIZED = [
  'system/',
  'lab/',
  'scripts/',
  'bench/',
  'scenarios/support/',
  'conformance/utils/',
  'conformance/support/',
];
const LIMITS = { fileLines: 600, functionLines: 120 };
/**
 * Generated tables only (a file a tool writes, such as a table of descriptors, that nobody reads as code) may pass
 * the limits, each named here with the tool that writes it. None today: keep it so.
 */
const GENERATED_TABLES: readonly string[] = [];

function violations(facts: SourceFacts) {
  return {
    imports: [
      ...RULES.flatMap((r) =>
        brokenImports(facts.imports, r).map((e) => `${e.from}:${e.line} imports ${e.to} (${r.why})`),
      ),
      ...CONFINED.flatMap((r) =>
        importsOutside(facts.imports, r).map((e) => `${e.from}:${e.line} imports ${e.to} (${r.why})`),
      ),
    ],
    cycles: importCycles(facts.imports, ''),
    helpers: strayTestHelpers(Object.keys(facts.lines)),
    sizes: SIZED.map((under) => oversized(facts, under, LIMITS, GENERATED_TABLES)).reduce((a, b) => ({
      files: [...a.files, ...b.files],
      functions: [...a.functions, ...b.functions],
    })),
  };
}

describe('the tree keeps the import rules', () => {
  let facts: SourceFacts;
  beforeAll(() => {
    facts = readSourceFacts(readTree(REPO, READ, { tests: true }));
  });

  it('reads the imports it judges (static, type-only and dynamic, resolved to repository paths)', () => {
    const from = (f: string) => facts.imports.filter((e) => e.from === f).map((e) => e.to);
    expect(from(`${CP}pipeline.ts`)).toEqual(
      expect.arrayContaining([`${CP}ir/gateway.ts`, `${CP}xds/translator/gateway.ts`, `${CP}krt/collection.ts`]),
    );
    expect(from(`${CP}serve/cache.ts`)).toContain(`${CP}pipeline.ts`);
    expect(from(`${PROXY}http/hcm.ts`)).toContain(`${PROXY}http/active-stream.ts`);
    expect(from(`${HOOK}pod-hook.ts`)).toEqual(expect.arrayContaining(['node:module', `${HOOK}hook-net.ts`]));
    expect(facts.imports.some((e) => e.typeOnly)).toBe(true);
    for (const dir of READ) {
      expect(Object.keys(facts.lines).filter((f) => f.startsWith(`${dir}/`)).length, dir).toBeGreaterThan(2);
    }
    expect(Object.keys(facts.lines).filter((f) => f.startsWith(PROXY)).length).toBeGreaterThan(40);
  });

  it('system/ ↛ lab/, controlplane/ ↛ proxy/ and back, ir/ ↛ xds/, xds/translator/ ↛ serve/, pure stages in one direction, proxy filters/ ↛ http/, the runtime hook only node: and its own folder', () => {
    expect(violations(facts).imports).toEqual([]);
  });

  it('no import cycle anywhere in system/, lab/, scripts/, bench/, scenarios/, conformance/ or tests/', () => {
    expect(violations(facts).cycles).toEqual([]);
  });

  it('no production file over 600 lines, no function over 120 (generated tables excepted: none)', () => {
    expect(violations(facts).sizes).toEqual({ files: [], functions: [] });
  });

  it('test helpers go by one name: a testing/ folder beside the code they serve', () => {
    expect(violations(facts).helpers).toEqual([]);
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
    // a collection reaching into the IR (a stage after it), the IR into statuses (what takes what it makes)
    [`${CP}krt/k.ts`]: "import type { A } from '../ir/k-ir.ts';\nexport type K = A;\n",
    [`${CP}ir/k-ir.ts`]: "import type { S } from '../status/s.ts';\nexport type A = S;\n",
    [`${CP}status/s.ts`]: 'export type S = 1;\n',
    // serve → ir is allowed; a dynamic import of lab/ is not
    [`${CP}serve/c.ts`]:
      "import { a } from '../ir/a.ts';\nexport type C = number;\nexport const c = () => import('../../../lab/d.ts');\n" +
      "// import { x } from '../../../lab/in-a-comment.ts';\nexport const s = `import('../../../lab/in-a-string.ts')`;\n" +
      'export const z = a;\n',
    [`${CP}big.ts`]: `${functions}${'// filler\n'.repeat(601 - (functions.split('\n').length - 1))}`,
    [`${PROXY}e.test.ts`]: "import { d } from '../../lab/d.ts';\nexport const e = d;\n",
    // a filter reaching into the connection manager (type-only counts); filter-api.ts is its way in
    [`${PROXY}filters/f.ts`]:
      "import type { S } from '../http/s.ts';\nimport type { Api } from './filter-api.ts';\nexport type F = S | Api;\n",
    [`${PROXY}filters/filter-api.ts`]: 'export type Api = 1;\n',
    [`${PROXY}http/s.ts`]: "import type { F } from '../filters/f.ts';\nexport type S = F | 2;\n",
    'lab/d.ts': 'export const d = 1;\n',
    // the control plane reaching into the proxy (a test too), and the proxy into the control plane
    [`${CP}ir/p.ts`]: "import { f } from '../../proxy/config/fmt.ts';\nexport const p = f;\n",
    [`${CP}ir/p.test.ts`]: "import type { F } from '../../proxy/testing/t.ts';\nexport type P = F;\n",
    [`${PROXY}config/fmt.ts`]: "import type { M } from '../../controlplane/model.ts';\nexport const f = 1 as M;\n",
    // test helpers by other names than testing/: one of each, and a helper in its testing/ folder
    [`${CP}testing.ts`]: 'export const t = 1;\n',
    'lab/embedded/cluster-testing.ts': 'export const t = 1;\n',
    'lab/testbed.ts': 'export const t = 1;\n',
    [`${PROXY}testing/harness.ts`]: 'export const t = 1;\n',
    'lab/embedded/node/testing/testbed.ts': 'export const t = 1;\n',
    'lab/tools/explain/x.ts': "import type { Y } from './y.ts';\nexport type X = Y;\n",
    'lab/tools/explain/y.ts': "import type { X } from './x.ts';\nexport type Y = X | 1;\n",
    'lab/embedded/node/p.ts': "import { q } from '../q.ts';\nexport const p = q;\n",
    'lab/embedded/q.ts': `import type { P } from './node/p.ts';\nexport type Q = P;\nexport const q = 1;\n${fn('longToo', 118)}`,
    // the hook: node builtins and its own folder pass; a package, a bare builtin and the rest of lab/ do not
    [`${HOOK}h.ts`]:
      "import { readFileSync } from 'node:fs';\nimport { g } from './g.ts';\nimport { parse } from 'yaml';\n" +
      "import { join } from 'path';\nimport { q } from '../../q.ts';\nexport const h = [readFileSync, g, parse, join, q];\n",
    [`${HOOK}g.ts`]: 'export const g = 1;\n',
    [`${HOOK}h.test.ts`]: "import { it } from 'vitest';\nimport { h } from './h.ts';\nit('h', () => h);\n",
    // a cycle between two folders, and a long function in bench/
    'scripts/s.ts': `import { b } from '../bench/b.ts';\nexport const s = b;\n`,
    'bench/b.ts': `import type { S } from '../scripts/s.ts';\nexport type B = S;\nexport const b = 1;\n${fn('benchLong', 118)}`,
  };
  let v: ReturnType<typeof violations>;
  beforeAll(() => {
    v = violations(readSourceFacts(fixture));
  });

  it('finds each forbidden import, and only those (not in comments or strings)', () => {
    const hook = CONFINED[0].why;
    expect(v.imports).toEqual([
      `${CP}serve/c.ts:3 imports lab/d.ts (${RULES[0].why})`,
      `${PROXY}e.test.ts:1 imports lab/d.ts (${RULES[0].why})`,
      `${CP}ir/p.test.ts:1 imports ${PROXY}testing/t.ts (${RULES[1].why})`,
      `${CP}ir/p.ts:1 imports ${PROXY}config/fmt.ts (${RULES[1].why})`,
      `${PROXY}config/fmt.ts:1 imports ${CP}model.ts (${RULES[2].why})`,
      `${CP}ir/a.ts:1 imports ${CP}xds/translator/b.ts (${RULES[3].why})`,
      `${CP}xds/translator/b.ts:1 imports ${CP}serve/c.ts (${RULES[4].why})`,
      `${PROXY}filters/f.ts:1 imports ${PROXY}http/s.ts (${RULES[5].why})`,
      `${CP}krt/k.ts:1 imports ${CP}ir/k-ir.ts (${STAGE_RULES[0].why})`,
      `${CP}ir/k-ir.ts:1 imports ${CP}status/s.ts (${STAGE_RULES.at(-1)!.why})`,
      `${HOOK}h.ts:3 imports yaml (${hook})`,
      `${HOOK}h.ts:4 imports path (${hook})`,
      `${HOOK}h.ts:5 imports lab/embedded/q.ts (${hook})`,
    ]);
  });

  it('finds the cycles, type-only imports included, within a folder and across two', () => {
    expect(v.cycles).toEqual([
      ['bench/b.ts', 'scripts/s.ts'],
      ['lab/embedded/node/p.ts', 'lab/embedded/q.ts'],
      ['lab/tools/explain/x.ts', 'lab/tools/explain/y.ts'],
      [`${CP}ir/a.ts`, `${CP}serve/c.ts`, `${CP}xds/translator/b.ts`],
      [`${PROXY}filters/f.ts`, `${PROXY}http/s.ts`],
    ]);
  });

  it('finds the file over 600 lines and the functions over 120, wherever the production code is', () => {
    expect(v.sizes.files).toEqual([{ file: `${CP}big.ts`, lines: 601 }]);
    expect(v.sizes.functions.map((f) => `${f.file}:${f.line} ${f.name} ${f.lines}`)).toEqual([
      `${CP}big.ts:1 long 121`,
      'lab/embedded/q.ts:4 longToo 121',
      'bench/b.ts:4 benchLong 121',
    ]);
  });

  it('finds test helpers outside a testing/ folder', () => {
    expect(v.helpers).toEqual(['lab/embedded/cluster-testing.ts', 'lab/testbed.ts', `${CP}testing.ts`]);
  });

  it('lets a generated table named in the exception list pass the size limits', () => {
    const facts = readSourceFacts({ [`${CP}big.ts`]: fixture[`${CP}big.ts`] });
    expect(oversized(facts, CP, LIMITS, [`${CP}big.ts`])).toEqual({ files: [], functions: [] });
  });
});
