// Kubernetes' Quantity CEL library (k8s.io/apiserver/pkg/cel/library/quantity.go, Kubernetes 1.32):
// `quantity(s)`, `isQuantity(s)`, `isInteger()`, `asInteger()`, `asApproximateFloat()`, `sign()`, `add(q|int)`,
// `sub(q|int)`, `isGreaterThan(q)`, `isLessThan(q)`, `compareTo(q)`. A quantity is kept exactly as
// mantissa × 10^exp (binary suffixes multiply the mantissa by 2^n), which is how resource.Quantity's inf.Dec
// compares and adds; the syntax is resource.ParseQuantity's (`<sign><digits>[.<digits>]<suffix>`).
import type { CelFunc, CelValue } from '@bufbuild/cel';
import { fail, fn, method, OpaqueValue } from './func.ts';

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

export class QuantityValue extends OpaqueValue {
  readonly celTypeName = 'kubernetes.Quantity';
  readonly mantissa: bigint;
  readonly exp: number;
  constructor(mantissa: bigint, exp: number) {
    super();
    this.mantissa = mantissa;
    this.exp = exp;
  }
  private aligned(o: QuantityValue): [bigint, bigint, number] {
    const e = Math.min(this.exp, o.exp);
    return [this.mantissa * 10n ** BigInt(this.exp - e), o.mantissa * 10n ** BigInt(o.exp - e), e];
  }
  compare(o: QuantityValue): number {
    const [a, b] = this.aligned(o);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  add(o: QuantityValue, sign = 1n): QuantityValue {
    const [a, b, e] = this.aligned(o);
    return new QuantityValue(a + sign * b, e);
  }
  equals(o: OpaqueValue): boolean {
    return o instanceof QuantityValue && this.compare(o) === 0;
  }
  integer(): bigint | undefined {
    if (this.exp >= 0) return this.mantissa * 10n ** BigInt(this.exp);
    const d = 10n ** BigInt(-this.exp);
    return this.mantissa % d === 0n ? this.mantissa / d : undefined;
  }
}

export function toQuantity(s: string): QuantityValue {
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/.exec(s);
  if (!m) fail("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  const [whole, frac = ''] = m[2].split('.');
  let mantissa = BigInt((whole || '0') + frac) * (m[1] === '-' ? -1n : 1n);
  let exp = -frac.length;
  const suf = m[3] ?? '';
  if (suf in BINARY) mantissa *= BINARY[suf];
  else if (suf in DECIMAL) exp += DECIMAL[suf];
  else exp += Number(suf.slice(1));
  return new QuantityValue(mantissa, exp);
}

const q = (t: CelValue) => (t instanceof QuantityValue ? t : undefined);
const arg = (a: CelValue) =>
  a instanceof QuantityValue ? a : typeof a === 'bigint' ? new QuantityValue(a, 0) : undefined;
const MAX = (1n << 63n) - 1n;
const MIN = -(1n << 63n);

export const quantityLibrary: CelFunc[] = [
  fn('quantity', 1, ([s]) => (typeof s === 'string' ? (toQuantity(s) as unknown as CelValue) : undefined)),
  fn('isQuantity', 1, ([s]) => {
    if (typeof s !== 'string') return undefined;
    try {
      toQuantity(s);
      return true;
    } catch {
      return false;
    }
  }),
  method('isInteger', 0, (t) => {
    const v = q(t)?.integer();
    return q(t) ? v !== undefined && v <= MAX && v >= MIN : undefined;
  }),
  method('asInteger', 0, (t) => {
    if (!q(t)) return undefined;
    const v = q(t)?.integer();
    if (v === undefined || v > MAX || v < MIN) fail('cannot convert value to integer');
    return v;
  }),
  method('asApproximateFloat', 0, (t) => (q(t) ? Number(q(t)?.mantissa) * 10 ** (q(t)?.exp ?? 0) : undefined)),
  method('sign', 0, (t) => (q(t) ? BigInt(Math.sign(Number(q(t)?.mantissa))) : undefined)),
  method('add', 1, (t, [a]) =>
    q(t) && arg(a) ? (q(t)?.add(arg(a) as QuantityValue) as unknown as CelValue) : undefined,
  ),
  method('sub', 1, (t, [a]) =>
    q(t) && arg(a) ? (q(t)?.add(arg(a) as QuantityValue, -1n) as unknown as CelValue) : undefined,
  ),
  method('isGreaterThan', 1, (t, [a]) =>
    q(t) && q(a) ? (q(t) as QuantityValue).compare(q(a) as QuantityValue) > 0 : undefined,
  ),
  method('isLessThan', 1, (t, [a]) =>
    q(t) && q(a) ? (q(t) as QuantityValue).compare(q(a) as QuantityValue) < 0 : undefined,
  ),
  method('compareTo', 1, (t, [a]) =>
    q(t) && q(a) ? BigInt((q(t) as QuantityValue).compare(q(a) as QuantityValue)) : undefined,
  ),
];
