// The RE2-compatible regex engine shared by the control plane (validation) and the proxy (matching), so "valid at
// translation" and "valid at the proxy" are one answer. JavaScript's RegExp accepts more than RE2 (look-around,
// back-references), which Envoy rejects; re2js implements RE2's syntax and linear-time matching in pure JavaScript.
import { RE2JS } from 're2js';

export class RegexError extends Error {
  readonly pattern: string;
  constructor(pattern: string, message: string) {
    super(message);
    this.name = 'RegexError';
    this.pattern = pattern;
  }
}

export interface Re2 {
  readonly pattern: string;
  /** Number of capture groups. */
  readonly groups: number;
  /** True when the pattern matches somewhere in `s` (a partial match, RE2::PartialMatch). */
  test(s: string): boolean;
  /** True when the pattern matches all of `s` (RE2::FullMatch), as Envoy's safe_regex matchers do. */
  matchesFully(s: string): boolean;
  /** The first `limit` matches in `s` (all of them when `limit` < 0), left to right (Kubernetes' CEL `findAll`). */
  findAll(s: string, limit: number): string[];
  /**
   * Replaces every match in `s` (RE2::GlobalReplace). `sub` uses RE2's rewrite syntax, as Envoy's regex_rewrite
   * does: `\0` is the whole match, `\1`..`\9` a group, `\\` a backslash. Throws RegexError for a bad rewrite.
   */
  replaceAll(s: string, sub: string): string;
  /** Why `sub` is not a valid rewrite for this pattern (RE2::CheckRewriteString), or undefined when it is. */
  rewriteError(sub: string): string | undefined;
}

type Piece = string | number;

/** RE2's metacharacters: outside them, a character of a pattern matches itself. */
const META = new Set([...'\\.+*?()|[]{}^$']);

/**
 * The literal text every full match of `pattern` starts with ('' when none is certain): its leading literal
 * characters (an escaped punctuation character counts as itself), without the last one when a quantifier follows it,
 * and none at all when the pattern has an alternation (`|`) anywhere, which could make it optional. RE2 computes the
 * same for an anchored pattern (RE2::RequiredPrefix) and skips the automaton when the prefix is absent: matchesFully
 * rejects with one startsWith what would otherwise cost a whole re2js run (a route table's regex routes are tried on
 * every request that reaches them).
 */
export function requiredPrefix(pattern: string): string {
  if (pattern.includes('|')) return '';
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    let lit: string;
    let next: number;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined || (!META.has(e) && !/[/\-#&~!%=,:;<>@`'"]/.test(e))) break;
      lit = e;
      next = i + 2;
    } else if (META.has(c)) {
      break;
    } else {
      lit = c;
      next = i + 1;
    }
    const q = pattern[next];
    if (q === '?' || q === '*' || q === '{') break;
    out += lit;
    // `+` repeats the character once or more: it is still required once, and nothing after it is certain.
    if (q === '+') break;
    i = next;
  }
  return out;
}

const cache = new Map<string, Re2>();
const CACHE_MAX = 20_000;

/**
 * Compiles an RE2 pattern. Throws RegexError with RE2's message (e.g. "invalid or unsupported Perl syntax: `(?=`").
 * Compiled patterns are immutable and shared: a route table pushed again (every RDS update resends all of its
 * routes) reuses them instead of parsing each regex anew.
 */
export function compileRe2(pattern: string): Re2 {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const re = compileUncached(pattern);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, re);
  return re;
}

function compileUncached(pattern: string): Re2 {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw new RegexError(pattern, (err as Error).message);
  }
  const groups = re.groupCount();
  const prefix = requiredPrefix(pattern);
  const rewrites = new Map<string, Piece[]>();
  const parsed = (sub: string): Piece[] => {
    let pieces = rewrites.get(sub);
    if (!pieces) {
      pieces = parseRewrite(sub, groups, pattern);
      if (rewrites.size < 64) rewrites.set(sub, pieces);
    }
    return pieces;
  };
  return {
    pattern,
    groups,
    test: (s) => re.test(s),
    matchesFully: prefix ? (s) => s.startsWith(prefix) && re.testExact(s) : (s) => re.testExact(s),
    findAll(s, limit) {
      const out: string[] = [];
      const m = re.matcher(s);
      while ((limit < 0 || out.length < limit) && m.find()) out.push(m.group() ?? '');
      return out;
    },
    replaceAll(s, sub) {
      const pieces = parsed(sub);
      return re.matcher(s).replaceAll((...args: unknown[]) => {
        let out = '';
        for (const p of pieces) out += typeof p === 'string' ? p : ((args[p] as string | undefined) ?? '');
        return out;
      });
    },
    rewriteError(sub) {
      try {
        parseRewrite(sub, groups, pattern);
        return undefined;
      } catch (err) {
        return (err as Error).message;
      }
    },
  };
}

/** RE2's message for an invalid pattern, or undefined when it compiles. */
export function re2Error(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function parseRewrite(sub: string, groups: number, pattern: string): Piece[] {
  const pieces: Piece[] = [];
  let lit = '';
  for (let i = 0; i < sub.length; i++) {
    const c = sub[i]!;
    if (c !== '\\') {
      lit += c;
      continue;
    }
    const next = sub[i + 1];
    i++;
    if (next === '\\') {
      lit += '\\';
    } else if (next !== undefined && next >= '0' && next <= '9') {
      const n = Number(next);
      if (n > groups) {
        throw new RegexError(
          pattern,
          `requested group ${n} in rewrite ${JSON.stringify(sub)}, but the regex has only ${groups} subpattern${groups === 1 ? '' : 's'}`,
        );
      }
      if (lit) pieces.push(lit);
      lit = '';
      pieces.push(n);
    } else {
      throw new RegexError(
        pattern,
        `invalid rewrite pattern: ${JSON.stringify(sub)} (use \\0-\\9 for groups, \\\\ for a backslash)`,
      );
    }
  }
  if (lit) pieces.push(lit);
  return pieces;
}

/** `s` as an RE2 pattern that matches it literally (its metacharacters escaped with a backslash). */
export function escapeRe2(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}
