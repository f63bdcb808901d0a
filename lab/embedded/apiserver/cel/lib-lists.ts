// Kubernetes' lists and regex CEL libraries (k8s.io/apiserver/pkg/cel/library/lists.go and regex.go, Kubernetes
// 1.32): `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)`, `lastIndexOf(x)` on lists of comparable values;
// `find(re)` (the first match or ''), `findAll(re)` and `findAll(re, n)` on strings, with RE2 semantics: the engine
// and compiled-pattern cache of system/shared/regex.ts, which `matches` and the control plane and proxy use too.
import { type CelFunc, type CelValue, celList, isCelList } from '@bufbuild/cel';
import { compileRe2 } from '../../../../system/shared/regex.ts';
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
    return compileRe2(p).findAll(t, 1)[0] ?? '';
  }),
  method('findAll', 1, (t, [p]) =>
    typeof t === 'string' && typeof p === 'string'
      ? (celList(compileRe2(p).findAll(t, -1)) as unknown as CelValue)
      : undefined,
  ),
  method('findAll', 2, (t, [p, n]) =>
    typeof t === 'string' && typeof p === 'string' && typeof n === 'bigint'
      ? (celList(compileRe2(p).findAll(t, Number(n))) as unknown as CelValue)
      : undefined,
  ),
];

/**
 * `matches` with RE2 semantics and the shared compiled-pattern cache of system/shared/regex.ts (@bufbuild/cel would
 * compile the pattern at every call).
 */
export const matchesRe2 = { compile: (pattern: string) => compileRe2(pattern) };
