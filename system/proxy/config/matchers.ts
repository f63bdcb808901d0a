// Envoy's string, header and query-parameter matchers (envoy.type.matcher.v3.StringMatcher,
// envoy.config.route.v3.HeaderMatcher, QueryParameterMatcher), compiled once per config into closures.
import { compileRe2, RegexError } from '../../shared/regex.ts';
import { ConfigError } from './errors.ts';

type J = Record<string, any>;

export type StringMatch = (value: string) => boolean;

/** Compiles a RegexMatcher ({regex, google_re2}); a bad pattern is a ConfigError in Envoy's wording. */
export function compileRegex(m: J | undefined, where: string) {
  const pattern = m?.regex;
  if (typeof pattern !== 'string') throw new ConfigError(`${where}: regex is required`);
  try {
    return compileRe2(pattern);
  } catch (err) {
    if (err instanceof RegexError) throw new ConfigError(`Invalid regex '${pattern}': ${err.message}`);
    throw err;
  }
}

export function compileStringMatcher(m: J | undefined, where: string): StringMatch {
  if (!m) throw new ConfigError(`${where}: string matcher is required`);
  const ic = m.ignore_case === true;
  const norm = (s: string) => (ic ? s.toLowerCase() : s);
  if (m.exact !== undefined) {
    const e = norm(m.exact);
    return ic ? (v) => v.toLowerCase() === e : (v) => v === e;
  }
  if (m.prefix !== undefined) {
    if (m.prefix === '') throw new ConfigError(`${where}.prefix: value length must be at least 1 characters`);
    const p = norm(m.prefix);
    return (v) => norm(v).startsWith(p);
  }
  if (m.suffix !== undefined) {
    if (m.suffix === '') throw new ConfigError(`${where}.suffix: value length must be at least 1 characters`);
    const s = norm(m.suffix);
    return (v) => norm(v).endsWith(s);
  }
  if (m.contains !== undefined) {
    if (m.contains === '') throw new ConfigError(`${where}.contains: value length must be at least 1 characters`);
    const c = norm(m.contains);
    return (v) => norm(v).includes(c);
  }
  if (m.safe_regex !== undefined) {
    // ignore_case does not apply to regexes (Envoy: use (?i) in the pattern).
    const re = compileRegex(m.safe_regex, `${where}.safe_regex`);
    return (v) => re.matchesFully(v);
  }
  if (m.custom !== undefined) throw new ConfigError(`${where}.custom: custom string matchers are not supported`);
  throw new ConfigError(`${where}: StringMatcher has no match_pattern`);
}

/** Header values as the router sees them: multiple values of one header are joined with ','. */
export type HeaderGetter = (lowerName: string) => string | undefined;

export type HeaderMatch = (get: HeaderGetter) => boolean;

export function compileHeaderMatcher(m: J, where: string): HeaderMatch {
  const name = String(m.name ?? '').toLowerCase();
  if (!name) throw new ConfigError(`${where}.name: value length must be at least 1 characters`);
  const invert = m.invert_match === true;
  const missingAsEmpty = m.treat_missing_header_as_empty === true;
  // Envoy's HeaderUtility::matchHeaders: a missing header only ever matches a present_match (true when inverted,
  // false otherwise); every other matcher is false on a missing header, inverted or not, unless
  // treat_missing_header_as_empty makes it the empty string.
  let present: boolean | undefined;
  let test: (v: string) => boolean;
  if (m.exact_match !== undefined) {
    const e = m.exact_match as string;
    test = (v) => e === '' || v === e;
  } else if (m.safe_regex_match !== undefined) {
    const re = compileRegex(m.safe_regex_match, `${where}.safe_regex_match`);
    test = (v) => re.matchesFully(v);
  } else if (m.range_match !== undefined) {
    const start = Number(m.range_match.start ?? 0);
    const end = Number(m.range_match.end ?? 0);
    test = (v) => {
      if (!/^[+-]?\d+$/.test(v)) return false;
      const n = Number(v);
      return n >= start && n < end;
    };
  } else if (m.prefix_match !== undefined) {
    const p = m.prefix_match as string;
    test = (v) => v.startsWith(p);
  } else if (m.suffix_match !== undefined) {
    const sfx = m.suffix_match as string;
    test = (v) => v.endsWith(sfx);
  } else if (m.contains_match !== undefined) {
    const c = m.contains_match as string;
    test = (v) => v.includes(c);
  } else if (m.string_match !== undefined) {
    test = compileStringMatcher(m.string_match, `${where}.string_match`);
  } else {
    present = m.present_match === undefined ? true : m.present_match === true;
    const p = present;
    test = () => p;
  }
  return (get) => {
    let v = get(name);
    if (v === undefined) {
      if (!missingAsEmpty) return present !== undefined && (invert ? present : !present);
      v = '';
    }
    return test(v) !== invert;
  };
}

export type QueryMatch = (params: URLSearchParams) => boolean;

export function compileQueryMatcher(m: J, where: string): QueryMatch {
  const name = String(m.name ?? '');
  if (!name) throw new ConfigError(`${where}.name: value length must be at least 1 characters`);
  // Envoy looks at the first value only; a present_match (true or false) just needs the parameter.
  if (m.string_match !== undefined) {
    const sm = compileStringMatcher(m.string_match, `${where}.string_match`);
    return (q) => {
      const v = q.get(name);
      return v !== null && sm(v);
    };
  }
  // Neither: the parameter must be present (Envoy's behaviour for an empty specifier).
  return (q) => q.has(name);
}
