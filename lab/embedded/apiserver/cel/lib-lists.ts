// Kubernetes' lists and regex CEL libraries (k8s.io/apiserver/pkg/cel/library/lists.go and regex.go, Kubernetes
// 1.32): `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)`, `lastIndexOf(x)` on lists of comparable values;
// `find(re)` (the first match or ''), `findAll(re)` and `findAll(re, n)` on strings, with RE2 semantics (re2js, as
// `matches` uses; compiled patterns are cached, since rules are fixed strings).
import { type CelFunc, type CelValue, celList, isCelList } from '@bufbuild/cel';
import { RE2JS } from 're2js';
import { k8sEquals } from './equality.ts';
import { fail, method } from './func.ts';

type List = { size: number; get(i: number): CelValue | undefined; [Symbol.iterator](): Iterator<CelValue> };
const list = (t: CelValue) => (isCelList(t) ? (t as unknown as List) : undefined);
const items = (l: List) => [...(l as Iterable<CelValue>)];

function cmp(a: CelValue, b: CelValue): number {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number'))
    return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return fail('no such overload');
}

const regexCache = new Map<string, RE2JS>();
/** An RE2 pattern, compiled once. */
export function re2(pattern: string): RE2JS {
  let r = regexCache.get(pattern);
  if (!r) {
    r = RE2JS.compile(pattern);
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, r);
  }
  return r;
}

function findAll(s: string, pattern: string, n: number): string[] {
  const out: string[] = [];
  const m = re2(pattern).matcher(s);
  while ((n < 0 || out.length < n) && m.find()) out.push(m.group() ?? '');
  return out;
}

export const listsLibrary: CelFunc[] = [
  method('isSorted', 0, (t) => {
    const l = list(t);
    if (!l) return undefined;
    const xs = items(l);
    for (let i = 1; i < xs.length; i++) if (cmp(xs[i - 1], xs[i]) > 0) return false;
    return true;
  }),
  method('sum', 0, (t) => {
    const l = list(t);
    if (!l) return undefined;
    const xs = items(l);
    if (xs.every((x) => typeof x === 'bigint')) return xs.reduce((a, x) => (a as bigint) + (x as bigint), 0n);
    if (xs.every((x) => typeof x === 'number')) return xs.reduce((a, x) => (a as number) + (x as number), 0);
    return fail('no such overload');
  }),
  ...(['min', 'max'] as const).map((name) =>
    method(name, 0, (t) => {
      const l = list(t);
      if (!l) return undefined;
      const xs = items(l);
      if (!xs.length) fail(`${name} called on empty list`);
      return xs.reduce((a, x) => (name === 'min' ? (cmp(x, a) < 0 ? x : a) : cmp(x, a) > 0 ? x : a));
    }),
  ),
  method('indexOf', 1, (t, [x]) => {
    const l = list(t);
    return l ? BigInt(items(l).findIndex((y) => k8sEquals(y, x))) : undefined;
  }),
  method('lastIndexOf', 1, (t, [x]) => {
    const l = list(t);
    return l ? BigInt(items(l).findLastIndex((y) => k8sEquals(y, x))) : undefined;
  }),
  method('find', 1, (t, [p]) => {
    if (typeof t !== 'string' || typeof p !== 'string') return undefined;
    const m = re2(p).matcher(t);
    return m.find() ? (m.group() ?? '') : '';
  }),
  method('findAll', 1, (t, [p]) =>
    typeof t === 'string' && typeof p === 'string' ? (celList(findAll(t, p, -1)) as unknown as CelValue) : undefined,
  ),
  method('findAll', 2, (t, [p, n]) =>
    typeof t === 'string' && typeof p === 'string' && typeof n === 'bigint'
      ? (celList(findAll(t, p, Number(n))) as unknown as CelValue)
      : undefined,
  ),
];

/** `matches` with RE2 semantics and a compiled-pattern cache (@bufbuild/cel compiles the pattern at every call). */
export const matchesRe2 = { compile: (pattern: string) => ({ test: (s: string) => re2(pattern).matcher(s).find() }) };
