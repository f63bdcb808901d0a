// Kubernetes' IP and CIDR CEL libraries (k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go, Kubernetes 1.32):
// `isIP(s)`, `ip(s)`, `ip.isCanonical(s)`, `string(ip)`, `ip.family()`, `isUnspecified()`, `isLoopback()`,
// `isLinkLocalMulticast()`, `isLinkLocalUnicast()`, `isGlobalUnicast()`; `isCIDR(s)`, `cidr(s)`, `string(cidr)`,
// `containsIP(ip|string)`, `containsCIDR(cidr|string)`, `ip()`, `masked()`, `prefixLength()`. As there, IPv4-mapped
// IPv6 addresses and zones are refused, and parsing is Go's (no leading zeros). Addresses are parsed by formats.ts.
import type { CelFunc, CelValue } from '@bufbuild/cel';
import { parseCIDR, parseIP } from '../formats.ts';
import { fail, fn, method, OpaqueValue } from './func.ts';

const isMapped = (b: number[]) =>
  b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 255 && b[11] === 255;

export class IPValue extends OpaqueValue {
  readonly celTypeName = 'net.IP';
  readonly bytes: number[];
  constructor(bytes: number[]) {
    super();
    this.bytes = bytes;
  }
  get v4(): boolean {
    return this.bytes.length === 4;
  }
  equals(o: OpaqueValue): boolean {
    return o instanceof IPValue && o.bytes.join() === this.bytes.join();
  }
  toString(): string {
    if (this.v4) return this.bytes.join('.');
    const g: number[] = [];
    for (let i = 0; i < 16; i += 2) g.push((this.bytes[i] << 8) | this.bytes[i + 1]);
    // RFC 5952: the longest run (>1) of zero groups becomes '::'.
    let best = -1;
    let bestLen = 1;
    for (let i = 0; i < 8; ) {
      if (g[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && g[j] === 0) j++;
      if (j - i > bestLen) {
        best = i;
        bestLen = j - i;
      }
      i = j;
    }
    const hex = g.map((x) => x.toString(16));
    if (best < 0) return hex.join(':');
    return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
  }
}

/** The address's bytes with all but the first `prefix` bits cleared: the network a CIDR names. */
const networkBytes = (bytes: number[], prefix: number) =>
  bytes.map((x, i) => x & ((0xff << (8 - Math.max(0, Math.min(8, prefix - i * 8)))) & 0xff));

export class CIDRValue extends OpaqueValue {
  readonly celTypeName = 'net.IPPrefix';
  readonly ip: IPValue;
  readonly prefix: number;
  /** ip masked to prefix, kept because containsIP/containsCIDR compare every address against it. */
  readonly network: string;
  constructor(ip: IPValue, prefix: number) {
    super();
    this.network = networkBytes(ip.bytes, prefix).join();
    this.ip = ip;
    this.prefix = prefix;
  }
  equals(o: OpaqueValue): boolean {
    return o instanceof CIDRValue && o.prefix === this.prefix && o.ip.equals(this.ip);
  }
  toString(): string {
    return `${this.ip}/${this.prefix}`;
  }
  masked(): CIDRValue {
    return new CIDRValue(new IPValue(networkBytes(this.ip.bytes, this.prefix)), this.prefix);
  }
  contains(ip: IPValue): boolean {
    return ip.v4 === this.ip.v4 && networkBytes(ip.bytes, this.prefix).join() === this.network;
  }
}

/** ip(): the address, or the error cel's ip() raises. */
export function toIP(s: string): IPValue {
  if (s.includes('%')) fail(`IP address with zone value is not allowed`);
  const p = parseIP(s);
  if (!p) fail(`IP Address "${s}" parse error during conversion from string: ParseAddr("${s}"): unable to parse IP`);
  if (!p.v4 && isMapped(p.bytes)) fail(`IPv4-mapped IPv6 address "${s}" is not allowed`);
  return new IPValue(p.bytes);
}

export function toCIDR(s: string): CIDRValue {
  const p = parseCIDR(s);
  if (!p) fail(`network address parse error during conversion from string: network address "${s}" is not valid`);
  if (!p.ip.v4 && isMapped(p.ip.bytes)) fail(`IPv4-mapped IPv6 address "${s}" is not allowed`);
  return new CIDRValue(new IPValue(p.ip.bytes), p.prefix);
}

const ok = (f: () => unknown) => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};
const ipOf = (t: CelValue) => (t instanceof IPValue ? t : undefined);
const cidrOf = (t: CelValue) => (t instanceof CIDRValue ? t : undefined);
const cel = (v: unknown) => v as CelValue;

function ipMethod(name: string, f: (ip: IPValue) => CelValue): CelFunc {
  return method(name, 0, (t) => {
    const ip = ipOf(t);
    return ip ? f(ip) : undefined;
  });
}

const b = (ip: IPValue) => ip.bytes;

export const ipLibrary: CelFunc[] = [
  fn('isIP', 1, ([s]) => (typeof s === 'string' ? ok(() => toIP(s)) : undefined)),
  fn('ip', 1, ([s]) => (typeof s === 'string' ? cel(toIP(s)) : undefined)),
  fn('ip.isCanonical', 1, ([s]) => (typeof s === 'string' ? toIP(s).toString() === s : undefined)),
  fn('string', 1, ([v]) => (v instanceof IPValue || v instanceof CIDRValue ? v.toString() : undefined)),
  ipMethod('family', (ip) => (ip.v4 ? 4n : 6n)),
  ipMethod('isUnspecified', (ip) => b(ip).every((x) => x === 0)),
  ipMethod('isLoopback', (ip) =>
    ip.v4
      ? b(ip)[0] === 127
      : b(ip)
          .slice(0, 15)
          .every((x) => x === 0) && b(ip)[15] === 1,
  ),
  ipMethod('isLinkLocalMulticast', (ip) =>
    ip.v4 ? b(ip)[0] === 224 && b(ip)[1] === 0 && b(ip)[2] === 0 : b(ip)[0] === 0xff && (b(ip)[1] & 0x0f) === 0x02,
  ),
  ipMethod('isLinkLocalUnicast', (ip) =>
    ip.v4 ? b(ip)[0] === 169 && b(ip)[1] === 254 : b(ip)[0] === 0xfe && (b(ip)[1] & 0xc0) === 0x80,
  ),
  ipMethod('isGlobalUnicast', (ip) => {
    const x = b(ip);
    if (ip.v4)
      return !(
        x[0] === 0 ||
        x[0] === 127 ||
        x[0] >= 224 ||
        (x[0] === 169 && x[1] === 254) ||
        x.every((y) => y === 255)
      );
    return !(
      x.every((y) => y === 0) ||
      x[0] === 0xff ||
      (x[0] === 0xfe && (x[1] & 0xc0) === 0x80) ||
      (x.slice(0, 15).every((y) => y === 0) && x[15] === 1)
    );
  }),
  fn('isCIDR', 1, ([s]) => (typeof s === 'string' ? ok(() => toCIDR(s)) : undefined)),
  fn('cidr', 1, ([s]) => (typeof s === 'string' ? cel(toCIDR(s)) : undefined)),
  method('containsIP', 1, (t, [a]) => {
    const c = cidrOf(t);
    if (!c) return undefined;
    const ip = typeof a === 'string' ? toIP(a) : ipOf(a);
    return ip ? c.contains(ip) : undefined;
  }),
  method('containsCIDR', 1, (t, [a]) => {
    const c = cidrOf(t);
    if (!c) return undefined;
    const o = typeof a === 'string' ? toCIDR(a) : cidrOf(a);
    return o ? o.prefix >= c.prefix && c.contains(o.ip) : undefined;
  }),
  method('ip', 0, (t) => (cidrOf(t) ? cel(cidrOf(t)?.ip) : undefined)),
  method('masked', 0, (t) => (cidrOf(t) ? cel(cidrOf(t)?.masked()) : undefined)),
  method('prefixLength', 0, (t) => (cidrOf(t) ? BigInt(cidrOf(t)?.prefix ?? 0) : undefined)),
];
