import { describe, expect, it } from 'vitest';
import { compileRe2, RegexError, re2Error, requiredPrefix } from './regex.ts';

describe('compileRe2', () => {
  it('matches partially with test() and fully with matchesFully()', () => {
    const re = compileRe2('/api/v[0-9]+');
    expect(re.test('/x/api/v2/y')).toBe(true);
    expect(re.matchesFully('/x/api/v2/y')).toBe(false);
    expect(re.matchesFully('/api/v2')).toBe(true);
    expect(re.groups).toBe(0);
  });

  it('supports RE2 syntax: inline flags, named groups, Unicode classes', () => {
    expect(compileRe2('(?i)/ABC').matchesFully('/abc')).toBe(true);
    expect(compileRe2('(?P<v>v\\d)/.*').matchesFully('v1/x')).toBe(true);
    expect(compileRe2('\\p{Greek}+').matchesFully('αβγ')).toBe(true);
  });

  it('rejects what JavaScript accepts but RE2 does not, with RE2 messages', () => {
    for (const [pattern, msg] of [
      ['a(?=b)', 'invalid or unsupported Perl syntax: `(?='],
      ['(a)\\1', 'invalid escape sequence: `\\1`'],
      ['(abc', 'missing closing ): `(abc`'],
      ['[z-a]', 'invalid character class range: `z-a`'],
      ['x{1001}', 'invalid repeat count: `{1001}`'],
    ] as const) {
      expect(re2Error(pattern)).toContain(msg);
      expect(() => compileRe2(pattern)).toThrow(RegexError);
      try {
        compileRe2(pattern);
      } catch (err) {
        expect((err as RegexError).pattern).toBe(pattern);
        expect((err as Error).message).toContain(msg);
      }
    }
    expect(re2Error('^/ok$')).toBeUndefined();
  });

  it('replaceAll uses RE2 rewrite syntax (\\0-\\9, \\\\) like Envoy regex_rewrite', () => {
    const re = compileRe2('^/service/([^/]+)(/.*)$');
    expect(re.replaceAll('/service/foo/v1/api', '\\2/instance/\\1')).toBe('/v1/api/instance/foo');
    expect(compileRe2('o').replaceAll('foo', '0')).toBe('f00');
    expect(compileRe2('x*').replaceAll('abc', '-')).toBe('-a-b-c-');
    expect(compileRe2('b').replaceAll('abc', '[\\0\\\\]')).toBe('a[b\\]c');
    expect(compileRe2('$').replaceAll('a$b', '$1')).toBe('a$b$1');
  });

  it('checks a rewrite against the pattern like RE2::CheckRewriteString', () => {
    const re = compileRe2('(a)(b)');
    expect(re.rewriteError('\\1\\2')).toBeUndefined();
    expect(re.rewriteError('\\3')).toContain('requested group 3');
    expect(re.rewriteError('\\x')).toContain('invalid rewrite pattern');
    expect(() => re.replaceAll('ab', '\\3')).toThrow(RegexError);
  });
});

describe('requiredPrefix: the literal start every full match has (RE2::RequiredPrefix), matchesFully unchanged', () => {
  it.each([
    ['/api/v3/[a-z]+/[0-9]+', '/api/v3/'],
    ['/v0/items/[0-9]+', '/v0/items/'],
    ['\\/static\\.files/.*', '/static.files/'],
    ['abc?d', 'ab'],
    ['ab*c', 'a'],
    ['ab{2}c', 'a'],
    ['ab+c', 'ab'],
    ['/a|/b', ''],
    ['(?i)/api', ''],
    ['^/api', ''],
    ['[a-z]+', ''],
    ['\\d+/x', ''],
    ['', ''],
  ])('%s → %j', (pattern, prefix) => {
    expect(requiredPrefix(pattern)).toBe(prefix);
  });

  it('full matches agree with re2js alone on paths with and without the prefix', () => {
    const cases: [string, string[]][] = [
      ['/api/v3/[a-z]+/[0-9]+', ['/api/v3/abc/12', '/api/v3/abc', '/api/v30/abc/1', '/x/api/v3/a/1', '/api/v3/']],
      ['abc?d', ['abd', 'abcd', 'ab', 'abccd', 'xabd']],
      ['ab+c', ['abc', 'abbbc', 'ac', 'abd']],
      ['(?i)/API', ['/api', '/Api', '/apx']],
    ];
    for (const [pattern, inputs] of cases) {
      const re = compileRe2(pattern);
      const js = new RegExp(`^(?:${pattern.replace('(?i)', '')})$`, pattern.startsWith('(?i)') ? 'i' : '');
      for (const s of inputs) expect(re.matchesFully(s), `${pattern} ~ ${s}`).toBe(js.test(s));
    }
  });
});
