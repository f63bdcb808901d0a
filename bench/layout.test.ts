// Where benchmarks live (ARCHITECTURE.md: "bench/ — benchmarks behind `npm run bench:*`", issue 11): every bench:*
// npm script runs a file under bench/, README.md's table lists it, and no benchmark is left among the code it
// measures. (The size rule for
// bench/'s files, as for all production code, is tests/architecture's.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

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

  it('no benchmark file lies outside bench/', () => {
    const stray = ['system', 'lab', 'scripts', 'scenarios']
      .flatMap((d) => files(join(root, d)))
      .map((f) => relative(root, f))
      .filter((f) => /(^|\/)bench[-.]/.test(f));
    expect(stray).toEqual([]);
  });
});
