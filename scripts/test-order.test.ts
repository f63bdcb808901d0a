// The start order of test files (test-order.ts): the files that take long by design first, in the listed order,
// the others in the order vitest gave them; each listed file exists (a renamed file would silently drop out).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../lab/install.ts';
import { LONG_BY_DESIGN, longFirst } from './test-order.ts';

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

  it('names files that exist', () => {
    for (const f of LONG_BY_DESIGN) expect(existsSync(join(REPO_ROOT, f)), f).toBe(true);
  });
});
