// OpenAPI `format`s of CRD schemas, checked as kube-apiserver checks them: the formats apiextensions-apiserver
// supports (k8s.io/apiextensions-apiserver/pkg/apiserver/validation/formats.go, Kubernetes 1.32) with kube-openapi's
// strfmt validators (k8s.io/kube-openapi/pkg/validation/strfmt/default.go), which follow Go's net and encoding
// packages: `ipv4` is net.ParseIP with a dot (no leading zeros, so `1.2.3` and `01.2.3.4` are refused), `ipv6`
// net.ParseIP with a colon, `cidr` net.ParseCIDR, `mac` net.ParseMAC, `byte` standard base64, `date`/`date-time`
// RFC 3339, `uuid*` the canonical 8-4-4-4-12 form. Formats outside that list (`int32`, `int64`, `double`, custom
// names) are ignored, as kube-apiserver ignores them. The CEL `format` library (cel/lib-format.ts) and CEL's
// `isIP`/`cidr` (cel/lib-ip.ts) share the address parsers below.

/** The 4 bytes of a dotted-quad IPv4 address (Go's parser: 0-255, no leading zeros), or undefined. */
export function parseIPv4(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

/** The 16 bytes of an IPv6 address (with an optional trailing dotted quad; no zone), or undefined. */
export function parseIPv6(s: string): number[] | undefined {
  if (!s.includes(':') || s.includes('%')) return undefined;
  let tail: number[] = [];
  let str = s;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = v4;
    str = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = str.split('::');
  if (halves.length > 2) return undefined;
  const group = (h: string) => (h === '' ? [] : h.split(':'));
  const head = group(halves[0]);
  const rest = halves.length === 2 ? group(halves[1]) : [];
  const groups = head.length + rest.length;
  if (halves.length === 1 ? groups !== 8 : groups > 7) return undefined;
  const all = [...head, ...Array(8 - groups).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    const n = Number.parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** net.ParseIP: the 16-byte form of an IPv4 or IPv6 address, or undefined. */
export function parseIP(s: string): { bytes: number[]; v4: boolean } | undefined {
  const v4 = parseIPv4(s);
  if (v4) return { bytes: v4, v4: true };
  const v6 = parseIPv6(s);
  return v6 ? { bytes: v6, v4: false } : undefined;
}

/** net.ParseCIDR: address and prefix length, or undefined. */
export function parseCIDR(s: string): { ip: { bytes: number[]; v4: boolean }; prefix: number } | undefined {
  const i = s.indexOf('/');
  if (i < 0) return undefined;
  const ip = parseIP(s.slice(0, i));
  const p = s.slice(i + 1);
  if (!ip || !/^(0|[1-9]\d*)$/.test(p)) return undefined;
  const prefix = Number(p);
  if (prefix > ip.bytes.length * 8) return undefined;
  return { ip, prefix };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** strfmt's date-time layouts: RFC 3339 with or without fractions, `Z` or an offset (also without seconds' zone). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/;
export function validDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m || !validDate(m[1])) return false;
  return Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 61;
}

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;
const uuidVersion = (v: string) =>
  new RegExp(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?${v}[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$`);
const HOSTNAME_LABEL = /^[\p{L}\p{S}0-9]([\p{L}\p{S}0-9-]{0,61}[\p{L}\p{S}0-9])?$/u;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
// strfmt.ParseDuration: `<n> <unit>` pairs with its unit names.
const STRFMT_DURATION =
  /^(\s*\d+\s*(ns|us|µs|ms|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|wk|wks|week|weeks)\s*)+$/;

function validBase64(s: string): boolean {
  return /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s);
}

function validMAC(s: string): boolean {
  if (/^[0-9a-fA-F]{4}(\.[0-9a-fA-F]{4}){2}([.][0-9a-fA-F]{4}){0,7}$/.test(s))
    return [3, 4, 10].includes(s.split('.').length);
  for (const sep of [':', '-']) {
    const parts = s.split(sep);
    if ([6, 8, 20].includes(parts.length) && parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) return true;
  }
  return false;
}

function validURI(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

function validHostname(s: string): boolean {
  if (s.length === 0 || s.length > 255) return false;
  const host = s.endsWith('.') ? s.slice(0, -1) : s;
  return host.split('.').every((l) => HOSTNAME_LABEL.test(l));
}

/** The formats apiextensions-apiserver checks, each with strfmt's validator. */
export const FORMATS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: validURI,
  email: (s) => EMAIL.test(s),
  hostname: validHostname,
  ipv4: (s) => parseIPv4(s) !== undefined,
  ipv6: (s) => parseIPv6(s) !== undefined,
  cidr: (s) => parseCIDR(s) !== undefined,
  mac: validMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => uuidVersion('3').test(s),
  uuid4: (s) => uuidVersion('4').test(s),
  uuid5: (s) => uuidVersion('5').test(s),
  isbn: (s) => /^(\d{9}[\dX]|\d{13})$/.test(s.replace(/[\s-]/g, '')),
  isbn10: (s) => /^\d{9}[\dX]$/.test(s.replace(/[\s-]/g, '')),
  isbn13: (s) => /^\d{13}$/.test(s.replace(/[\s-]/g, '')),
  creditcard: (s) => /^\d{13,19}$/.test(s.replace(/[\s-]/g, '')),
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => /^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$/.test(s),
  byte: validBase64,
  password: () => true,
  date: validDate,
  duration: (s) => GO_DURATION.test(s) || STRFMT_DURATION.test(s),
  datetime: validDateTime,
  'date-time': validDateTime,
};

/** Whether `value` satisfies `format`; true for formats kube-apiserver does not check. */
export function checkFormat(format: string, value: string): boolean {
  const f = FORMATS[format];
  return f ? f(value) : true;
}
