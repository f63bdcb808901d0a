// CEL optionals (cel-go's OptionalTypes library, which kube-apiserver enables): `optional.of(x)`, `optional.none()`,
// `optional.ofNonZeroValue(x)`, `o.hasValue()`, `o.value()`, `o.orValue(x)`, `o.or(o2)`. `oldSelf` is an optional
// in rules with `optionalOldSelf: true`, and the `format` library returns them. The `.?field` / `[?key]` syntax is
// not available: @bufbuild/cel 0.6.1's parser does not accept it (README of the apiserver folder).
import type { CelFunc, CelValue } from '@bufbuild/cel';
import { isCelList, isCelMap } from '@bufbuild/cel';
import { k8sEquals } from './equality.ts';
import { fail, fn, method, OpaqueValue } from './func.ts';

export class OptionalValue extends OpaqueValue {
  readonly celTypeName = 'optional_type';
  readonly value: CelValue | undefined;
  constructor(value: CelValue | undefined) {
    super();
    this.value = value;
  }
  equals(o: OpaqueValue): boolean {
    if (!(o instanceof OptionalValue)) return false;
    if (this.value === undefined || o.value === undefined) return this.value === o.value;
    return k8sEquals(this.value, o.value);
  }
}

export const NONE = new OptionalValue(undefined);
export const optionalOf = (v: CelValue): OptionalValue => new OptionalValue(v);

function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === 0 || v === 0n || v === '') return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v) || isCelMap(v)) return (v as { size: number }).size === 0;
  return false;
}

const opt = (t: CelValue) => (t instanceof OptionalValue ? t : undefined);

export const optionalLibrary: CelFunc[] = [
  fn('optional.of', 1, ([v]) => new OptionalValue(v) as unknown as CelValue),
  fn('optional.none', 0, () => NONE as unknown as CelValue),
  fn('optional.ofNonZeroValue', 1, ([v]) => (isZero(v) ? NONE : new OptionalValue(v)) as unknown as CelValue),
  method('hasValue', 0, (t) => (opt(t) ? opt(t)?.value !== undefined : undefined)),
  method('value', 0, (t) => {
    const o = opt(t);
    if (!o) return undefined;
    return o.value === undefined ? fail('optional.none() dereference') : o.value;
  }),
  method('orValue', 1, (t, [d]) => {
    const o = opt(t);
    return o ? (o.value ?? d) : undefined;
  }),
  method('or', 1, (t, [other]) => {
    const o = opt(t);
    if (!o || !(other instanceof OptionalValue)) return undefined;
    return (o.value !== undefined ? o : other) as unknown as CelValue;
  }),
];
