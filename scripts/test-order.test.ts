// The start order of test files (test-order.ts): the files that take long by design first, in the listed order,
// then the others by the durations of a whole run (test-durations.json), longest first, then those it does not know
// in the order vitest gave them; each listed file exists (a renamed file would silently drop out).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../lab/install.ts';
import { durationsFrom, knownDurations, LONG_BY_DESIGN, longFirst } from './test-order.ts';

describe('test file order', () => {
  it('puts the files that take long by design first, and keeps the order of the others', () => {
    const given = ['b.test.ts', LONG_BY_DESIGN[2], 'a.test.ts', LONG_BY_DESIGN[0], 'c.test.ts'];
    expect(longFirst(given, (f) => f)).toEqual([
      LONG_BY_DESIGN[0],
      LONG_BY_DESIGN[2],
      'b.test.ts',
      'a.test.ts',
      'c.test.ts',
    ]);
  });

  it('then the files of known duration, longest first, then the unknown ones in the order given', () => {
    const durations = { 'small-but-slow.test.ts': 17.7, 'big-but-quick.test.ts': 0.4 };
    const given = ['new.test.ts', 'big-but-quick.test.ts', LONG_BY_DESIGN[1], 'small-but-slow.test.ts', 'old.test.ts'];
    expect(longFirst(given, (f) => f, durations)).toEqual([
      LONG_BY_DESIGN[1],
      'small-but-slow.test.ts',
      'big-but-quick.test.ts',
      'new.test.ts',
      'old.test.ts',
    ]);
  });

  it("reads a run's files.json into the table: seconds, by path from the checkout", () => {
    expect(
      durationsFrom(
        [
          { file: '/x/repo/b.test.ts', ms: 17_749 },
          { file: '/x/repo/a/c.test.ts', ms: 30 },
        ],
        '/x/repo',
      ),
    ).toEqual({ 'a/c.test.ts': 0, 'b.test.ts': 17.7 });
  });

  it('names files that exist (refresh the table: node scripts/test-order.ts reports/latest/files.json)', () => {
    for (const f of LONG_BY_DESIGN) expect(existsSync(join(REPO_ROOT, f)), f).toBe(true);
    const table = Object.keys(knownDurations());
    expect(table.length).toBeGreaterThan(300);
    for (const f of table) expect(existsSync(join(REPO_ROOT, f)), f).toBe(true);
  });
});
