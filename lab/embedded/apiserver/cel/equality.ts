// CEL equality with Kubernetes' list semantics (k8s.io/apiserver/pkg/cel/common/values.go): lists of
// `x-kubernetes-list-type: set` are equal when they hold the same elements in any order, lists of type `map` when
// they hold equal entries under the same keys in any order; atomic lists compare element by element. Values of the
// Kubernetes libraries (IP, CIDR, URL, Quantity, optional) compare by their own rules. Everything else is CEL's
// equality (numbers across int/uint/double, no NaN equality). Registered as `_==_` and `_!=_` in env.ts.
import { type CelFunc, type CelValue, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { fn, OpaqueValue } from './func.ts';
import { ListValue } from './values.ts';

type Reflected = { desc?: { typeName?: string }; message?: unknown };
type List = { size: number; get(i: number): CelValue | undefined };
type MapLike = {
  size: number;
  get(k: unknown): CelValue | undefined;
  [Symbol.iterator](): Iterator<[unknown, CelValue]>;
};

export function k8sEquals(a: CelValue, b: CelValue): boolean {
  if (a === b) return true;
  if (isCelUint(a)) a = (a as unknown as { value: bigint }).value;
  if (isCelUint(b)) b = (b as unknown as { value: bigint }).value;
  const ta = typeof a;
  const tb = typeof b;
  if ((ta === 'number' || ta === 'bigint') && (tb === 'number' || tb === 'bigint')) return numEquals(a, b);
  if (ta !== 'object' || tb !== 'object' || a === null || b === null) return false;
  if (a instanceof OpaqueValue || b instanceof OpaqueValue)
    return a instanceof OpaqueValue && b instanceof OpaqueValue && a.constructor === b.constructor && a.equals(b);
  if (a instanceof Uint8Array || b instanceof Uint8Array)
    return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  if (isCelList(a)) return isCelList(b) && listEquals(a as unknown as List, b as unknown as List);
  if (isCelMap(a)) return isCelMap(b) && mapEquals(a as unknown as MapLike, b as unknown as MapLike);
  const ma = a as unknown as Reflected;
  const mb = b as unknown as Reflected;
  if (ma.desc?.typeName && mb.desc?.typeName)
    // Timestamps and durations (protobuf messages of seconds and nanos).
    return ma.desc.typeName === mb.desc.typeName && JSON.stringify(ma.message, big) === JSON.stringify(mb.message, big);
  return false;
}

/** int/uint/double equality across types (CEL's heterogeneous numeric equality). */
function numEquals(a: unknown, b: unknown): boolean {
  if (typeof a === typeof b) return a === b;
  const [n, i] = (typeof a === 'number' ? [a, b] : [b, a]) as [number, bigint];
  return Number.isInteger(n) && BigInt(n) === i;
}

const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

function listEquals(a: List, b: List): boolean {
  if (a.size !== b.size) return false;
  const sem = a instanceof ListValue ? a : b instanceof ListValue ? b : undefined;
  if (sem?.listType === 'set' || (sem?.listType === 'map' && sem.mapKeys.length)) {
    // Order-insensitive: every element of a has an equal element in b (sizes are equal and set/map items unique).
    const used = new Array<boolean>(b.size).fill(false);
    for (let i = 0; i < a.size; i++) {
      const x = a.get(i) as CelValue;
      let found = false;
      for (let j = 0; j < b.size; j++) {
        if (!used[j] && k8sEquals(x, b.get(j) as CelValue)) {
          used[j] = found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  }
  for (let i = 0; i < a.size; i++) if (!k8sEquals(a.get(i) as CelValue, b.get(i) as CelValue)) return false;
  return true;
}

function mapEquals(a: MapLike, b: MapLike): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined || !k8sEquals(v, w)) return false;
  }
  return true;
}

export const equalityLibrary: CelFunc[] = [
  fn('_==_', 2, ([a, b]) => k8sEquals(a, b), '_==_(dyn,dyn)'),
  fn('_!=_', 2, ([a, b]) => !k8sEquals(a, b), '_!=_(dyn,dyn)'),
];
