// protoc-gen-validate constraints of the Envoy protos ([(validate.rules) ...] on fields, (validate.required) on
// oneofs), checked on canonical JSON the way Envoy's MessageUtil::validate does before it accepts a resource. The
// control plane can run the same check (strict validation) and the proxy NACKs with Envoy's wording:
//   Proto constraint validation failed (RouteConfigurationValidationError.VirtualHosts[0]: embedded message failed
//   validation | caused by VirtualHostValidationError.Domains: value must contain at least 1 item(s))
// Any is followed into its packed message, as Envoy validates each extension's config when it loads it.
import protobuf from 'protobufjs';
import { compileRe2 } from '../regex.ts';
import { findType, lookupType, typeNameOf } from './protos.ts';

type J = Record<string, any>;

export interface Violation {
  /** JSON path of the offending value, e.g. `virtual_hosts[0].domains`. */
  path: string;
  /** PGV's message for the innermost violation, e.g. `value must contain at least 1 item(s)`. */
  message: string;
  /** Envoy's chained explanation (the text inside "Proto constraint validation failed (...)"). */
  chain: string;
}

export class ProtoValidationError extends Error {
  readonly violation: Violation;
  constructor(v: Violation) {
    super(`Proto constraint validation failed (${v.chain})`);
    this.name = 'ProtoValidationError';
    this.violation = v;
  }
}

function camel(name: string): string {
  return name
    .split('_')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1) : p))
    .join('');
}

function shortName(type: protobuf.Type): string {
  return type.name;
}

function rulesOf(f: protobuf.Field | protobuf.OneOf): J | undefined {
  const parsed = (f as unknown as { parsedOptions?: J[] | null }).parsedOptions;
  if (!parsed) return undefined;
  for (const o of parsed) if (o['(validate.rules)'] !== undefined) return o['(validate.rules)'] as J;
  return undefined;
}

function oneofRequired(o: protobuf.OneOf): boolean {
  const parsed = (o as unknown as { parsedOptions?: J[] | null }).parsedOptions;
  return !!parsed?.some((x) => x['(validate.required)'] === true);
}

function messageDisabled(t: protobuf.Type): boolean {
  const parsed = (t as unknown as { parsedOptions?: J[] | null }).parsedOptions;
  return !!parsed?.some((x) => x['(validate.disabled)'] === true || x['(validate.ignored)'] === true);
}

const HEADER_NAME_STRICT = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
const HEADER_VALUE_STRICT = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;
const HEADER_LOOSE = /^[^\u0000\u000A\u000D]*$/;

function durationNanos(v: unknown): bigint | undefined {
  if (typeof v === 'string') {
    const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(v);
    if (!m) return undefined;
    const n = BigInt(m[2]!) * 1_000_000_000n + BigInt((m[3] ?? '').padEnd(9, '0') || '0');
    return m[1] ? -n : n;
  }
  if (v && typeof v === 'object') {
    const o = v as J;
    return BigInt(o.seconds ?? 0) * 1_000_000_000n + BigInt(o.nanos ?? 0);
  }
  return undefined;
}

function durationText(v: J | undefined): string {
  const n = durationNanos(v ?? {}) ?? 0n;
  const neg = n < 0n;
  const a = neg ? -n : n;
  const s = a / 1_000_000_000n;
  const frac = a % 1_000_000_000n;
  if (frac === 0n) return `${neg ? '-' : ''}${s}s`;
  return `${neg ? '-' : ''}${s}.${String(frac).padStart(9, '0').replace(/0+$/, '')}s`;
}

function rangeMessage(r: J, fmt: (v: unknown) => string): string | undefined {
  const has = (k: string) => r[k] !== undefined;
  if (has('gt') && has('lt')) return `value must be inside range (${fmt(r.gt)}, ${fmt(r.lt)})`;
  if (has('gte') && has('lte')) return `value must be inside range [${fmt(r.gte)}, ${fmt(r.lte)}]`;
  if (has('gte') && has('lt')) return `value must be inside range [${fmt(r.gte)}, ${fmt(r.lt)})`;
  if (has('gt') && has('lte')) return `value must be inside range (${fmt(r.gt)}, ${fmt(r.lte)}]`;
  if (has('gt')) return `value must be greater than ${fmt(r.gt)}`;
  if (has('gte')) return `value must be greater than or equal to ${fmt(r.gte)}`;
  if (has('lt')) return `value must be less than ${fmt(r.lt)}`;
  if (has('lte')) return `value must be less than or equal to ${fmt(r.lte)}`;
  return undefined;
}

function numberRules(r: J, value: number | bigint): string | undefined {
  const n =
    typeof value === 'bigint' ? value : BigInt(Math.trunc(value)) === BigInt(value as number) ? BigInt(value) : value;
  const cmp = (a: unknown, b: unknown): number => {
    const x = typeof a === 'bigint' ? a : Number(a);
    const y = typeof b === 'bigint' ? b : Number(b);
    if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0;
    return Number(x) < Number(y) ? -1 : Number(x) > Number(y) ? 1 : 0;
  };
  const asNum = (v: unknown) =>
    typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : typeof v === 'number' ? v : v;
  if (r.const !== undefined && cmp(n, asNum(r.const)) !== 0) return `value must equal ${r.const}`;
  if (Array.isArray(r.in) && !r.in.some((x: unknown) => cmp(n, asNum(x)) === 0))
    return `value must be in list [${r.in.join(' ')}]`;
  if (Array.isArray(r.not_in) && r.not_in.some((x: unknown) => cmp(n, asNum(x)) === 0))
    return `value must not be in list [${r.not_in.join(' ')}]`;
  const ok =
    (r.gt === undefined || cmp(n, asNum(r.gt)) > 0) &&
    (r.gte === undefined || cmp(n, asNum(r.gte)) >= 0) &&
    (r.lt === undefined || cmp(n, asNum(r.lt)) < 0) &&
    (r.lte === undefined || cmp(n, asNum(r.lte)) <= 0);
  if (!ok) return rangeMessage(r, (v) => String(v));
  return undefined;
}

/** Length in code points (PGV's "characters"), without allocating for the common ASCII case. */
function runeLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

function stringRules(r: J, s: string): string | undefined {
  const needRunes = r.len !== undefined || r.min_len !== undefined || r.max_len !== undefined;
  const runes = needRunes ? runeLength(s) : 0;
  const bytes = r.min_bytes !== undefined || r.max_bytes !== undefined ? Buffer.byteLength(s) : 0;
  if (r.const !== undefined && s !== r.const) return `value must equal ${r.const}`;
  if (r.len !== undefined && runes !== Number(r.len)) return `value length must be ${r.len} characters`;
  if (r.min_len !== undefined && runes < Number(r.min_len))
    return `value length must be at least ${r.min_len} characters`;
  if (r.max_len !== undefined && runes > Number(r.max_len))
    return `value length must be at most ${r.max_len} characters`;
  if (r.min_bytes !== undefined && bytes < Number(r.min_bytes))
    return `value length must be at least ${r.min_bytes} bytes`;
  if (r.max_bytes !== undefined && bytes > Number(r.max_bytes))
    return `value length must be at most ${r.max_bytes} bytes`;
  if (r.pattern !== undefined && !compileRe2(String(r.pattern)).test(s))
    return `value does not match regex pattern "${r.pattern}"`;
  if (r.prefix !== undefined && !s.startsWith(r.prefix)) return `value does not have prefix "${r.prefix}"`;
  if (r.suffix !== undefined && !s.endsWith(r.suffix)) return `value does not have suffix "${r.suffix}"`;
  if (r.contains !== undefined && !s.includes(r.contains)) return `value does not contain substring "${r.contains}"`;
  if (r.not_contains !== undefined && s.includes(r.not_contains)) return `value contains substring "${r.not_contains}"`;
  if (Array.isArray(r.in) && !r.in.includes(s)) return `value must be in list [${r.in.join(' ')}]`;
  if (Array.isArray(r.not_in) && r.not_in.includes(s)) return `value must not be in list [${r.not_in.join(' ')}]`;
  if (r.well_known_regex !== undefined) {
    const strict = r.strict !== false;
    const wk = r.well_known_regex;
    let re: RegExp | undefined;
    if (wk === 'HTTP_HEADER_NAME' || wk === 1) re = strict ? HEADER_NAME_STRICT : HEADER_LOOSE;
    else if (wk === 'HTTP_HEADER_VALUE' || wk === 2) re = strict ? HEADER_VALUE_STRICT : HEADER_LOOSE;
    if (re && !re.test(s)) return `value does not match regex pattern "${re.source}"`;
  }
  return undefined;
}

interface Ctx {
  /** Innermost violation found, with its chain. */
  found?: Violation;
}

function fail(ctx: Ctx, path: string, typeLabel: string, field: string, message: string): false {
  ctx.found = { path, message, chain: `${typeLabel}ValidationError.${field}: ${message}` };
  return false;
}

/** Wraps an inner violation the way PGV reports embedded messages. */
function embed(ctx: Ctx, typeLabel: string, field: string): false {
  const inner = ctx.found!;
  ctx.found = {
    ...inner,
    chain: `${typeLabel}ValidationError.${field}: embedded message failed validation | caused by ${inner.chain}`,
  };
  return false;
}

const WRAPPER_SCALAR: Record<string, string> = {
  '.google.protobuf.DoubleValue': 'double',
  '.google.protobuf.FloatValue': 'float',
  '.google.protobuf.Int64Value': 'int64',
  '.google.protobuf.UInt64Value': 'uint64',
  '.google.protobuf.Int32Value': 'int32',
  '.google.protobuf.UInt32Value': 'uint32',
  '.google.protobuf.BoolValue': 'bool',
  '.google.protobuf.StringValue': 'string',
  '.google.protobuf.BytesValue': 'bytes',
};

const fullNames = new WeakMap<protobuf.ReflectionObject, string>();
function fullName(t: protobuf.ReflectionObject): string {
  let n = fullNames.get(t);
  if (n === undefined) {
    n = t.fullName;
    fullNames.set(t, n);
  }
  return n;
}

const NO_RULES = new WeakMap<protobuf.Type, boolean>();

/** True when no field of the type (or any type it reaches) has a rule: such subtrees are skipped. */
function ruleless(t: protobuf.Type, seen = new Set<protobuf.Type>()): boolean {
  const cached = NO_RULES.get(t);
  if (cached !== undefined) return cached;
  if (seen.has(t)) return true;
  seen.add(t);
  let none = true;
  for (const o of t.oneofsArray) if (oneofRequired(o)) none = false;
  for (const f of t.fieldsArray) {
    if (rulesOf(f)) none = false;
    f.resolve();
    if (f.resolvedType instanceof protobuf.Type) {
      const fn = fullName(f.resolvedType);
      if (fn === '.google.protobuf.Any' || !ruleless(f.resolvedType, seen)) none = false;
    }
    if (!none) break;
  }
  NO_RULES.set(t, none);
  return none;
}

interface FieldPlan {
  f: protobuf.Field;
  name: string;
  label: string;
  rules: J | undefined;
  msg: protobuf.Type | undefined;
  fn: string;
  inOneof: boolean;
}

interface TypePlan {
  label: string;
  requiredOneofs: protobuf.OneOf[];
  fields: FieldPlan[];
}

const plans = new WeakMap<protobuf.Type, TypePlan | null>();

/** What to check on a type: only fields with rules, and message fields whose types have rules somewhere. */
function planFor(type: protobuf.Type): TypePlan | null {
  let p = plans.get(type);
  if (p !== undefined) return p;
  if (messageDisabled(type) || ruleless(type)) {
    plans.set(type, null);
    return null;
  }
  const fields: FieldPlan[] = [];
  for (const f of type.fieldsArray) {
    f.resolve();
    const rt = f.resolvedType;
    const msg = rt instanceof protobuf.Type ? rt : undefined;
    const fn = msg ? fullName(msg) : '';
    const rules = rulesOf(f);
    const needed = rules !== undefined || (msg !== undefined && (fn === '.google.protobuf.Any' || !ruleless(msg)));
    if (!needed) continue;
    fields.push({
      f,
      name: f.name,
      label: camel(f.name),
      rules,
      msg,
      fn,
      inOneof: !!f.partOf && !isSynthetic(f.partOf),
    });
  }
  p = { label: shortName(type), requiredOneofs: type.oneofsArray.filter(oneofRequired), fields };
  plans.set(type, p);
  return p;
}

function checkMessage(type: protobuf.Type, json: J, path: string, ctx: Ctx): boolean {
  const plan = planFor(type);
  if (!plan) return true;
  const label = plan.label;
  const at = (name: string) => (path ? `${path}.${name}` : name);
  for (const o of plan.requiredOneofs) {
    if (!o.oneof.some((n) => json[n] !== undefined)) return fail(ctx, path, label, camel(o.name), 'value is required');
  }
  for (const fp of plan.fields) {
    const f = fp.f;
    const v = json[fp.name];
    const rules = fp.rules;
    const fieldLabel = fp.label;
    const rt = f.resolvedType;
    if (f.map) {
      const m = (v ?? {}) as J;
      const keys = Object.keys(m);
      const mr = rules?.map as J | undefined;
      if (mr?.min_pairs !== undefined && keys.length < Number(mr.min_pairs))
        return fail(ctx, at(fp.name), label, fieldLabel, `value must contain at least ${mr.min_pairs} pair(s)`);
      if (mr?.max_pairs !== undefined && keys.length > Number(mr.max_pairs))
        return fail(ctx, at(fp.name), label, fieldLabel, `value must contain no more than ${mr.max_pairs} pair(s)`);
      for (const k of keys) {
        const kp = () => `${at(fp.name)}[${JSON.stringify(k)}]`;
        if (mr?.keys?.string) {
          const msg = stringRules(mr.keys.string, k);
          if (msg) return fail(ctx, kp(), label, `${fieldLabel}[${k}]`, msg);
        }
        if (fp.msg && !checkValue(fp.msg, m[k], kp(), mr?.values, ctx)) return embed(ctx, label, `${fieldLabel}[${k}]`);
      }
      continue;
    }
    if (f.repeated) {
      const arr = (v ?? []) as unknown[];
      const rr = rules?.repeated as J | undefined;
      if (rr?.min_items !== undefined && arr.length < Number(rr.min_items))
        return fail(ctx, at(fp.name), label, fieldLabel, `value must contain at least ${rr.min_items} item(s)`);
      if (rr?.max_items !== undefined && arr.length > Number(rr.max_items))
        return fail(ctx, at(fp.name), label, fieldLabel, `value must contain no more than ${rr.max_items} item(s)`);
      if (rr?.unique && new Set(arr.map((x) => JSON.stringify(x))).size !== arr.length) {
        return fail(ctx, at(fp.name), label, fieldLabel, 'repeated value must contain unique items');
      }
      if (arr.length === 0) continue;
      if (fp.msg) {
        if (rr?.items?.message?.skip) continue;
        const base = at(fp.name);
        for (let i = 0; i < arr.length; i++) {
          if (!checkValue(fp.msg, arr[i], `${base}[${i}]`, rr?.items, ctx))
            return embed(ctx, label, `${fieldLabel}[${i}]`);
        }
      } else if (rr?.items) {
        for (let i = 0; i < arr.length; i++) {
          const msg = scalarMessage(f, rt, rr.items, arr[i]);
          if (msg) return fail(ctx, `${at(fp.name)}[${i}]`, label, `${fieldLabel}[${i}]`, msg);
        }
      }
      continue;
    }
    if (fp.msg) {
      if (v === undefined) {
        // A rule on a oneof member applies only when that member is the one set (PGV checks inside the case).
        if (fp.inOneof) continue;
        if (
          rules?.message?.required ||
          rules?.duration?.required ||
          rules?.any?.required ||
          rules?.timestamp?.required
        ) {
          return fail(ctx, at(fp.name), label, fieldLabel, 'value is required');
        }
        continue;
      }
      const wrapped = WRAPPER_SCALAR[fp.fn];
      if (wrapped) {
        const msg = scalarMessage(f, undefined, rules, v, wrapped);
        if (msg) return fail(ctx, at(fp.name), label, fieldLabel, msg);
        continue;
      }
      if (fp.fn === '.google.protobuf.Duration') {
        const msg = durationMessage(rules?.duration, v);
        if (msg) return fail(ctx, at(fp.name), label, fieldLabel, msg);
        continue;
      }
      if (rules?.message?.skip) continue;
      if (!checkValue(fp.msg, v, at(fp.name), rules, ctx)) return embed(ctx, label, fieldLabel);
      continue;
    }
    if (v === undefined && (!rules || fp.inOneof)) continue;
    const msg = scalarMessage(f, rt, rules, v);
    if (msg) return fail(ctx, at(fp.name), label, fieldLabel, msg);
  }
  return true;
}

function isSynthetic(o: protobuf.OneOf): boolean {
  return o.oneof.length === 1 && o.name === `_${o.oneof[0]}`;
}

/** A message value (Any followed into its packed type). */
function checkValue(type: protobuf.Type, v: unknown, path: string, rules: J | undefined, ctx: Ctx): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (fullName(type) === '.google.protobuf.Any') {
    const o = v as J;
    const url = o['@type'] as string | undefined;
    const ar = rules?.any as J | undefined;
    if (ar && url) {
      if (Array.isArray(ar.in) && !ar.in.includes(url)) {
        ctx.found = {
          path,
          message: `type URL must be in list [${ar.in.join(' ')}]`,
          chain: `AnyValidationError: type URL must be in list [${ar.in.join(' ')}]`,
        };
        return false;
      }
    }
    if (!url) return true;
    const inner = findType(typeNameOf(url));
    if (!inner) return true;
    const { '@type': _t, ...fields } = o;
    return checkMessage(inner, fields, path, ctx);
  }
  return checkMessage(type, v as J, path, ctx);
}

function durationMessage(r: J | undefined, v: unknown): string | undefined {
  if (!r) return undefined;
  const n = durationNanos(v);
  if (n === undefined) return undefined;
  const lim = (k: string) => (r[k] !== undefined ? durationNanos(r[k]) : undefined);
  const gt = lim('gt');
  const gte = lim('gte');
  const lt = lim('lt');
  const lte = lim('lte');
  const ok =
    (gt === undefined || n > gt) &&
    (gte === undefined || n >= gte) &&
    (lt === undefined || n < lt) &&
    (lte === undefined || n <= lte);
  if (!ok) return rangeMessage(r, (x) => durationText(x as J));
  if (r.const !== undefined && durationNanos(r.const) !== n) return `value must equal ${durationText(r.const)}`;
  return undefined;
}

function scalarMessage(
  f: protobuf.Field,
  rt: protobuf.Type | protobuf.Enum | null | undefined,
  rules: J | undefined,
  v: unknown,
  wrapped?: string,
): string | undefined {
  if (!rules) return undefined;
  const kind = wrapped ?? f.type;
  if (rt instanceof protobuf.Enum) {
    const er = rules.enum as J | undefined;
    if (!er) return undefined;
    const num = typeof v === 'string' ? rt.values[v] : typeof v === 'number' ? v : 0;
    if (er.defined_only && (num === undefined || rt.valuesById[num] === undefined))
      return 'value must be one of the defined enum values';
    if (er.const !== undefined && num !== er.const) return `value must equal ${er.const}`;
    if (Array.isArray(er.in) && !er.in.includes(num)) return `value must be in list [${er.in.join(' ')}]`;
    if (Array.isArray(er.not_in) && er.not_in.includes(num))
      return `value must not be in list [${er.not_in.join(' ')}]`;
    return undefined;
  }
  const r = rules[kind] as J | undefined;
  if (!r) return undefined;
  switch (kind) {
    case 'string':
      return stringRules(r, typeof v === 'string' ? v : '');
    case 'bytes': {
      const len = typeof v === 'string' ? Buffer.from(v, 'base64').length : 0;
      if (r.min_len !== undefined && len < Number(r.min_len)) return `value length must be at least ${r.min_len} bytes`;
      if (r.max_len !== undefined && len > Number(r.max_len)) return `value length must be at most ${r.max_len} bytes`;
      return undefined;
    }
    case 'bool':
      if (r.const !== undefined && (v === true) !== r.const) return `value must equal ${r.const}`;
      return undefined;
    case 'double':
    case 'float':
      return numberRules(r, typeof v === 'number' ? v : Number(v ?? 0));
    default: {
      // int32, uint32, sint32, fixed32, sfixed32 and the 64-bit ones (canonical JSON: strings).
      const n = typeof v === 'string' ? BigInt(v) : BigInt(Math.trunc(Number(v ?? 0)));
      return numberRules(r, n);
    }
  }
}

/** Every PGV constraint of `typeName` on a canonical JSON value; the first violation, or undefined. */
export function validateJson(typeName: string, json: unknown): Violation | undefined {
  const type = lookupType(typeName);
  const ctx: Ctx = {};
  if (json === null || typeof json !== 'object') return undefined;
  const { '@type': _t, ...fields } = json as J;
  checkMessage(type, fields, '', ctx);
  return ctx.found;
}

/** Throws ProtoValidationError ("Proto constraint validation failed (...)") when a constraint fails. */
export function assertValid(typeName: string, json: unknown): void {
  const v = validateJson(typeName, json);
  if (v) throw new ProtoValidationError(v);
}
