// What the system image holds: system/Dockerfile copies package.json, package-lock.json and system/ from the build
// context, and .dockerignore leaves system/'s tests, test data and test helpers out. Checked here without a container
// engine: .dockerignore is applied as Docker applies it (patterns in order, the last match wins, a pattern that matches
// a folder matches what is in it; https://docs.docker.com/build/concepts/context/#dockerignore-files), and every file
// the entry point and its components import (read with TypeScript's parser) must be kept.
import { readFileSync } from 'node:fs';
import { join, matchesGlob, posix } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../system/main.ts';
import { readSourceFacts, readTree } from './source-facts.ts';

const REPO = join(import.meta.dirname, '..', '..');

/** `.dockerignore` lines as [pattern, excludes] in file order (comments and blank lines dropped). */
function ignoreRules(text: string): [string, boolean][] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => (l.startsWith('!') ? [posix.normalize(l.slice(1)), false] : [posix.normalize(l), true]));
}

/** Whether Docker sends `file` (repository-relative) to the build: the last pattern matching it or a parent decides. */
function sent(rules: [string, boolean][], file: string): boolean {
  const parts = file.split('/');
  const self = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let excluded = false;
  for (const [pattern, excludes] of rules) {
    const p = pattern.replace(/\/$/, '');
    if (self.some((s) => matchesGlob(s, p))) excluded = excludes;
  }
  return !excluded;
}

describe('the system image', () => {
  const rules = ignoreRules(readFileSync(join(REPO, '.dockerignore'), 'utf8'));
  const all = readTree(REPO, ['system'], { tests: true });
  let imported: Set<string>;

  beforeAll(() => {
    // The import closure of system/main.ts and of each component it loads by name (system/<component>/main.ts).
    const facts = readSourceFacts(readTree(REPO, ['system']));
    const next = new Map<string, string[]>();
    for (const e of facts.imports) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    imported = new Set();
    const todo = ['system/main.ts', ...COMPONENTS.map((c) => `system/${c}/main.ts`)];
    while (todo.length) {
      const f = todo.pop()!;
      if (imported.has(f) || !/^(system\/|package\.json$)/.test(f)) continue;
      imported.add(f);
      todo.push(...(next.get(f) ?? []));
    }
  });

  it('is built from package.json, package-lock.json and system/ (the Dockerfile COPY sources)', () => {
    const dockerfile = readFileSync(join(REPO, 'system', 'Dockerfile'), 'utf8');
    const sources = [...dockerfile.matchAll(/^COPY\s+(.+)\s+\S+$/gm)].flatMap((m) => m[1].trim().split(/\s+/));
    expect(sources.sort()).toEqual(['package-lock.json', 'package.json', 'system/']);
  });

  it('keeps every file the entry point and the components import, and package.json (read for the version)', () => {
    expect(imported.size).toBeGreaterThan(80);
    expect([...imported].filter((f) => !f.endsWith('.json') && !all[f])).toEqual([]);
    expect([...imported, 'package.json', 'package-lock.json'].filter((f) => !sent(rules, f))).toEqual([]);
  });

  it('holds no test file, test data or test helper of system/', () => {
    const tests = Object.keys(all).filter((f) => /\.test\.ts$|\/testing(\/|\.ts$)/.test(f));
    expect(tests.length).toBeGreaterThan(30);
    expect([...tests, 'system/controlplane/testdata/basic/input.yaml'].filter((f) => sent(rules, f))).toEqual([]);
    // Nothing the image needs is a test helper.
    expect([...imported].filter((f) => tests.includes(f))).toEqual([]);
    // And nothing outside what the Dockerfile copies is sent at all.
    expect(
      ['lab/state.ts', 'tests/architecture/rules.ts', 'node_modules/yaml/package.json'].filter((f) => sent(rules, f)),
    ).toEqual([]);
  });
});
