// Where benchmarks live (ARCHITECTURE.md: "bench/ — benchmarks behind `npm run bench:*`", issue 11): every bench:*
// npm script runs a file under bench/, README.md's table lists it, no benchmark is left among the code it measures,
// and bench/'s root holds only the entry files (README.md's Layout: a bench's other parts go in its folder, what
// every bench shares in shared/). (The size rule for bench/'s files, as for all production code, is
// tests/architecture's.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The entry files: what a bench:* script runs, and what README.md's table runs with `node bench/<file>`. */
function entryFiles(scripts: Record<string, string>, readme: string): Set<string> {
  const run = Object.entries(scripts)
    .filter(([name]) => name.startsWith('bench:'))
    .map(([, command]) => /^node bench\/(\S+\.ts)\b/.exec(command)?.[1]);
  const table = [...readme.matchAll(/^\| `node bench\/(\S+\.ts)\b/gm)].map((m) => m[1]);
  return new Set([...run, ...table].filter((f) => f !== undefined));
}

/** The TypeScript files at bench/'s root that are neither an entry nor a test: a bench's part left outside its folder. */
function strayAtRoot(rootFiles: string[], entries: Set<string>): string[] {
  return rootFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !entries.has(f)).sort();
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'reports' || name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe('benchmarks live in bench/', () => {
  it('every bench:* npm script runs an existing file under bench/', () => {
    const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
    const benches = Object.entries(scripts).filter(([name]) => name.startsWith('bench:'));
    expect(benches.length).toBeGreaterThan(0);
    for (const [name, command] of benches) {
      const file = /^node (bench\/\S+\.ts)\b/.exec(command)?.[1];
      expect(file, `${name}: ${command}`).toBeDefined();
      expect(statSync(join(root, file!)).isFile(), `${name}: ${file}`).toBe(true);
    }
  });

  it("every bench:* npm script has its row in bench/README.md's table", () => {
    const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
    const readme = readFileSync(join(root, 'bench', 'README.md'), 'utf8');
    const rows = new Set([...readme.matchAll(/^\| `npm run (bench:[\w-]+)` \|/gm)].map((m) => m[1]));
    const benches = Object.keys(scripts).filter((name) => name.startsWith('bench:'));
    expect(benches.filter((name) => !rows.has(name))).toEqual([]);
  });

  it("bench/'s root holds only entry files (a bench's parts live in its folder)", () => {
    const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
    const entries = entryFiles(scripts, readFileSync(join(root, 'bench', 'README.md'), 'utf8'));
    expect([...entries].sort()).toEqual(expect.arrayContaining(['proxy.ts', 'relay.ts', 'soak.ts']));
    expect(strayAtRoot(readdirSync(join(root, 'bench')), entries)).toEqual([]);
    // The rule itself, on a made-up root: a helper beside its entry is caught, tests and entries are not.
    const made = entryFiles({ 'bench:soak': 'node bench/soak.ts' }, '| `node bench/relay.ts --mb 1` | `relay.ts` |');
    expect(strayAtRoot(['soak.ts', 'soak-report.ts', 'soak.test.ts', 'relay.ts', 'README.md', 'soak'], made)).toEqual([
      'soak-report.ts',
    ]);
  });

  it('no benchmark file lies outside bench/', () => {
    const stray = ['system', 'lab', 'scripts', 'scenarios']
      .flatMap((d) => files(join(root, d)))
      .map((f) => relative(root, f))
      .filter((f) => /(^|\/)bench[-.]/.test(f));
    expect(stray).toEqual([]);
  });
});
