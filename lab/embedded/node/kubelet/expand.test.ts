// Kubernetes' $(VAR) expansion of command, args and env values (expand.ts), with the cases of
// third_party/forked/golang/expansion/expand_test.go that matter here: defined, empty and undefined names, `$$`.
import { describe, expect, it } from 'vitest';
import { expandVars } from './expand.ts';

describe('$(VAR) expansion', () => {
  const env: Record<string, string> = { A: 'x', EMPTY: '' };
  const look = (n: string) => env[n];
  it('follows Kubernetes rules', () => {
    expect(expandVars('$(A)-$(EMPTY)-$(B)', look)).toBe('x--$(B)');
    expect(expandVars('$$(A) $$ $x $(A', look)).toBe('$(A) $ $x $(A');
  });
});
