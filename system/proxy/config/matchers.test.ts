// Unit tests of Envoy's string, header and query parameter matchers as compiled from route configs.
import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.ts';
import { compileHeaderMatcher, compileQueryMatcher, compileStringMatcher } from './matchers.ts';

const headers = (h: Record<string, string>) => (name: string) => h[name];

describe('StringMatcher', () => {
  it('exact, prefix, suffix, contains, safe_regex, with and without ignore_case', () => {
    expect(compileStringMatcher({ exact: 'abc' }, 'm')('abc')).toBe(true);
    expect(compileStringMatcher({ exact: 'abc' }, 'm')('ABC')).toBe(false);
    expect(compileStringMatcher({ exact: 'abc', ignore_case: true }, 'm')('ABC')).toBe(true);
    expect(compileStringMatcher({ prefix: '/api' }, 'm')('/api/v1')).toBe(true);
    expect(compileStringMatcher({ prefix: '/API', ignore_case: true }, 'm')('/api/v1')).toBe(true);
    expect(compileStringMatcher({ suffix: '.json' }, 'm')('a.json')).toBe(true);
    expect(compileStringMatcher({ suffix: '.json' }, 'm')('a.jso')).toBe(false);
    expect(compileStringMatcher({ contains: 'mid' }, 'm')('amidst')).toBe(true);
    expect(compileStringMatcher({ safe_regex: { regex: 'v[0-9]+' } }, 'm')('v12')).toBe(true);
    // Regexes match the whole value, as Envoy's safe_regex does.
    expect(compileStringMatcher({ safe_regex: { regex: 'v[0-9]+' } }, 'm')('xv12')).toBe(false);
  });

  it('rejects empty prefixes and RE2-invalid regexes with Envoy wording', () => {
    expect(() => compileStringMatcher({ prefix: '' }, 'x')).toThrow(/value length must be at least 1/);
    expect(() => compileStringMatcher({ safe_regex: { regex: '(?=x)' } }, 'x')).toThrow(ConfigError);
    expect(() => compileStringMatcher({ safe_regex: { regex: '(?=x)' } }, 'x')).toThrow(/^Invalid regex '\(\?=x\)'/);
    expect(() => compileStringMatcher({}, 'x')).toThrow(/no match_pattern/);
  });
});

describe('HeaderMatcher (Envoy HeaderUtility::matchHeaders)', () => {
  const m = (spec: Record<string, unknown>) => compileHeaderMatcher({ name: 'x-h', ...spec }, 'h');

  it('matches values by each specifier', () => {
    expect(m({ exact_match: 'a' })(headers({ 'x-h': 'a' }))).toBe(true);
    expect(m({ exact_match: 'a' })(headers({ 'x-h': 'b' }))).toBe(false);
    expect(m({ string_match: { exact: 'a' } })(headers({ 'x-h': 'a' }))).toBe(true);
    expect(m({ string_match: { prefix: 'ab' } })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ string_match: { suffix: 'bc' } })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ string_match: { safe_regex: { regex: 'a.c' } } })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ string_match: { contains: 'b' } })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ prefix_match: 'ab' })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ suffix_match: 'bc' })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ contains_match: 'b' })(headers({ 'x-h': 'abc' }))).toBe(true);
    expect(m({ safe_regex_match: { regex: '\\d+' } })(headers({ 'x-h': '123' }))).toBe(true);
    expect(m({ range_match: { start: '10', end: '20' } })(headers({ 'x-h': '15' }))).toBe(true);
    expect(m({ range_match: { start: '10', end: '20' } })(headers({ 'x-h': '20' }))).toBe(false);
    expect(m({ range_match: { start: '10', end: '20' } })(headers({ 'x-h': 'x' }))).toBe(false);
  });

  it('present_match and a missing header', () => {
    expect(m({ present_match: true })(headers({ 'x-h': '' }))).toBe(true);
    expect(m({ present_match: true })(headers({}))).toBe(false);
    expect(m({ present_match: false })(headers({}))).toBe(true);
    expect(m({ present_match: false })(headers({ 'x-h': 'a' }))).toBe(false);
    // No specifier at all: the header must be present.
    expect(m({})(headers({ 'x-h': 'a' }))).toBe(true);
    expect(m({})(headers({}))).toBe(false);
  });

  it('invert_match flips a value match, but a missing header still fails unless it is a present match', () => {
    expect(m({ exact_match: 'a', invert_match: true })(headers({ 'x-h': 'b' }))).toBe(true);
    expect(m({ exact_match: 'a', invert_match: true })(headers({ 'x-h': 'a' }))).toBe(false);
    expect(m({ exact_match: 'a', invert_match: true })(headers({}))).toBe(false);
    expect(m({ present_match: true, invert_match: true })(headers({}))).toBe(true);
    expect(m({ present_match: true, invert_match: true })(headers({ 'x-h': 'a' }))).toBe(false);
  });

  it('treat_missing_header_as_empty', () => {
    expect(m({ string_match: { exact: '' }, treat_missing_header_as_empty: true })(headers({}))).toBe(true);
    expect(
      m({ string_match: { exact: 'a' }, treat_missing_header_as_empty: true, invert_match: true })(headers({})),
    ).toBe(true);
  });

  it('lower-cases the header name and requires one', () => {
    expect(compileHeaderMatcher({ name: 'X-H', exact_match: 'a' }, 'h')(headers({ 'x-h': 'a' }))).toBe(true);
    expect(() => compileHeaderMatcher({ exact_match: 'a' }, 'h')).toThrow(/name/);
  });
});

describe('QueryParameterMatcher', () => {
  const q = (s: string) => new URLSearchParams(s);
  it('string_match on the first value, present_match', () => {
    expect(compileQueryMatcher({ name: 'a', string_match: { exact: '1' } }, 'q')(q('a=1&a=2'))).toBe(true);
    expect(compileQueryMatcher({ name: 'a', string_match: { exact: '2' } }, 'q')(q('a=1&a=2'))).toBe(false);
    expect(compileQueryMatcher({ name: 'a', string_match: { prefix: 'x' } }, 'q')(q('b=x'))).toBe(false);
    expect(compileQueryMatcher({ name: 'a', present_match: true }, 'q')(q('a'))).toBe(true);
    expect(compileQueryMatcher({ name: 'a', present_match: true }, 'q')(q('b=1'))).toBe(false);
    expect(
      compileQueryMatcher({ name: 'debug', string_match: { exact: 'true', ignore_case: true } }, 'q')(q('debug=TRUE')),
    ).toBe(true);
  });
});
