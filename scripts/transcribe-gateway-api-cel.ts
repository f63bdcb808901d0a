// Transcribes upstream Gateway API's CEL test tables (tests/cel/*_test.go at a tag) into
// tests/gateway-api/cel-tables.json, which tests/gateway-api/cel-tables.test.ts runs against the embedded API server.
// Usage: npm run -s transcribe:gateway-api-cel -- [--tag v1.6.1] [--repo <bare git dir>]
//
// The tables are Go: per test function a `[]struct{...}{ cases }` literal and a t.Run body that builds the object
// from the case (a composite literal that reads `tc.<field>`, or a base object that the case's `mutate` closure
// assigns to) and creates it (then, with `mutateStatus`, updates its status; GatewayClass: creates, then updates).
// This reads that subset of Go — composite literals, `new(x)`/`&x`/pointer helpers, type conversions, the API
// packages' string constants, `fmt.Sprintf`/`strings.Repeat`, assignments and `append` in closures — and turns Go
// field names into JSON names with the `json:"..."` tags of the upstream API types (inline structs merged). A case
// it cannot read (a `for` loop, an unknown construct) is written with `untranscribed: <why>` so that the test shows
// it as skipped, not silently dropped. Each case keeps its upstream test function, name and expected substrings.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (k: string, d: string) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const TAG = opt('--tag', 'v1.6.1');
const REPO = opt('--repo', '/work/.mirror/kubernetes-sigs+gateway-api/repo');
const git = (...a: string[]) =>
  execFileSync('git', ['--git-dir', REPO, ...a], { encoding: 'utf8', maxBuffer: 1 << 26 });
const show = (p: string) => git('show', `${TAG}:${p}`);

// ---- JSON names and constants from the API packages ----
// metav1 (not in the API packages): the object's metadata fields the tests set.
const jsonName = new Map<string, string>([
  ['ObjectMeta', 'metadata'],
  ['TypeMeta', ''],
  ['Labels', 'labels'],
  ['Annotations', 'annotations'],
]);
const structs = new Map<string, StructField[]>();
const scalarTypes = new Map<string, string>();
const consts = new Map<string, string | number>([
  ['NamespaceDefault', 'default'],
  ['GroupName', ''],
]);
for (const f of git('ls-tree', '-r', '--name-only', TAG, 'apis', 'apisx').split('\n')) {
  if (!f.endsWith('.go') || f.endsWith('_test.go') || f.includes('zz_generated')) continue;
  const src = show(f);
  for (const m of src.matchAll(/^type (\w+) (string|bool|u?int\d*|float\d+)\s*$/gm)) scalarTypes.set(m[1], m[2]);
  for (const m of src.matchAll(/^type (\w+) struct \{\n([\s\S]*?)\n\}/gm)) {
    const fields: StructField[] = [];
    for (const f of m[2].matchAll(/^\t(\w+)\s+([^\s`]+)\s+`json:"([^"]*)"/gm)) {
      const [jn, ...o] = f[3].split(',');
      fields.push({
        go: f[1],
        json: jn,
        type: f[2],
        omitempty: o.includes('omitempty'),
        omitzero: o.includes('omitzero'),
      });
    }
    structs.set(m[1], fields);
  }
  for (const m of src.matchAll(/^\s+(\w+)\s+[^\n`]*`json:"([^"]*)"/gm)) {
    const name = m[2].split(',')[0];
    if (!jsonName.has(m[1])) jsonName.set(m[1], name === '' ? '' : name);
  }
  for (const m of src.matchAll(/^\s*(\w+)\s+(?:\w+\s+)?=\s*"([^"]*)"/gm)) if (!consts.has(m[1])) consts.set(m[1], m[2]);
  for (const m of src.matchAll(/^\s*(\w+)\s+(?:\w+\s+)?=\s*(\d+)\s*$/gm))
    if (!consts.has(m[1])) consts.set(m[1], Number(m[2]));
}

interface StructField {
  go: string;
  json: string;
  type: string;
  omitempty: boolean;
  omitzero: boolean;
}
/** What encoding/json writes for a field that a literal leaves out: its zero value unless omitempty (or a
 * pointer, slice or map, whose nil the API server drops as a null of a non-nullable field). */
function zeroOf(type: string): unknown {
  if (/^(\*|\[\]|map\[)/.test(type)) return undefined;
  const t = type.split('.').at(-1)!;
  const base = scalarTypes.get(t) ?? t;
  if (base === 'string') return '';
  if (base === 'bool') return false;
  if (/^(u?int\d*|float\d+)$/.test(base)) return 0;
  if (structs.has(t)) return withZeros(t, {});
  return undefined;
}
/** A struct literal's object with the zero values of the fields it leaves out. */
function withZeros(type: string, o: Record<string, unknown>): Record<string, unknown> {
  for (const f of structs.get(type) ?? []) {
    // omitempty leaves struct values in (encoding/json); omitzero drops them.
    const isStruct = structs.has(f.type.split('.').at(-1)!) && !/^(\*|\[\]|map\[)/.test(f.type);
    if (f.omitzero || (f.omitempty && !isStruct)) continue;
    if (f.json === '') {
      const inner = zeroOf(f.type);
      if (inner && typeof inner === 'object') for (const [k, v] of Object.entries(inner)) if (!(k in o)) o[k] = v;
      continue;
    }
    if (f.json === '-' || f.json in o) continue;
    const z = zeroOf(f.type);
    if (z !== undefined) o[f.json] = z;
  }
  return o;
}

// ---- tokens ----
type Tok = { t: 'id' | 'str' | 'num' | 'p'; v: string };
function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (src.startsWith('//', i)) {
      i = src.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (src.startsWith('/*', i)) {
      i = src.indexOf('*/', i) + 2;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      out.push({ t: 'str', v: JSON.parse(src.slice(i, j + 1)) });
      i = j + 1;
      continue;
    }
    if (c === '`') {
      const j = src.indexOf('`', i + 1);
      out.push({ t: 'str', v: src.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    const id = /^[A-Za-z_]\w*/.exec(src.slice(i, i + 200));
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    const num = /^\d+(\.\d+)?/.exec(src.slice(i, i + 40));
    if (num) {
      out.push({ t: 'num', v: num[0] });
      i += num[0].length;
      continue;
    }
    const p = ['...', ':=', '==', '!=', '&&', '||', '++', '+=', '<=', '>='].find((x) => src.startsWith(x, i)) ?? c;
    out.push({ t: 'p', v: p });
    i += p.length;
  }
  return out;
}

class Untranscribable extends Error {}

type Env = Map<string, unknown>;

class Parser {
  i = 0;
  readonly toks: Tok[];
  readonly env: Env;
  constructor(toks: Tok[], env: Env) {
    this.toks = toks;
    this.env = env;
  }
  peek(o = 0) {
    return this.toks[this.i + o];
  }
  next() {
    return this.toks[this.i++];
  }
  is(v: string, o = 0) {
    return this.peek(o)?.v === v && this.peek(o)?.t !== 'str';
  }
  expect(v: string) {
    const t = this.next();
    if (t?.v !== v) throw new Untranscribable(`expected ${v}, got ${t?.v}`);
  }
  /** Skips a type expression ([]pkg.T, *T, map[K]V, pkg.T, struct{...}); returns its last name (the element type). */
  skipType(): string | undefined {
    while (this.is('*') || (this.is('[') && this.is(']', 1))) this.i += this.is('*') ? 1 : 2;
    if (this.is('map')) {
      this.i++;
      this.expect('[');
      this.skipType();
      this.expect(']');
      return this.skipType();
    }
    if (this.is('struct')) {
      this.i++;
      this.skipBalanced('{', '}');
      return undefined;
    }
    if (this.is('func')) throw new Untranscribable('func type');
    let last = this.next().v;
    if (this.is('.')) {
      this.i++;
      last = this.next().v;
    }
    return last;
  }
  skipBalanced(open: string, close: string) {
    this.expect(open);
    let d = 1;
    while (d > 0) {
      const t = this.next();
      if (!t) throw new Untranscribable('unbalanced');
      if (t.t === 'p' && t.v === open) d++;
      if (t.t === 'p' && t.v === close) d--;
    }
  }
  expr(): unknown {
    let v = this.unary();
    while (this.is('+')) {
      this.i++;
      const r = this.unary();
      v = typeof v === 'number' && typeof r === 'number' ? v + r : String(v) + String(r);
    }
    return v;
  }
  unary(): unknown {
    if (this.is('&') || this.is('*')) {
      this.i++;
      return this.unary();
    }
    if (this.is('-')) {
      this.i++;
      return -(this.unary() as number);
    }
    return this.primary();
  }
  /** A `{...}` body of a composite literal of `type` (struct fields, map entries, or elements of `elem`). */
  literalBody(type?: string, elem?: string): unknown {
    this.expect('{');
    const fields: [string, unknown][] = [];
    const elems: unknown[] = [];
    let keyed = false;
    while (!this.is('}')) {
      if (this.peek().t === 'id' && this.is(':', 1)) {
        keyed = true;
        const k = this.next().v;
        this.i++;
        fields.push([k, this.is('{') ? this.literalBody() : this.expr()]);
      } else {
        const e = this.is('{') ? this.elided(elem) : this.expr();
        if (this.is(':')) {
          // A map entry with a computed key.
          keyed = true;
          this.i++;
          fields.push([`\u0000${String(e)}`, this.is('{') ? this.literalBody() : this.expr()]);
        } else elems.push(e);
      }
      if (this.is(',')) this.i++;
    }
    this.i++;
    if (!keyed) return elems;
    const o: Record<string, unknown> = {};
    for (const [k, v] of fields) {
      if (k.startsWith('\u0000')) {
        o[k.slice(1)] = v;
        continue;
      }
      const own = type ? structs.get(type)?.find((f) => f.go === k)?.json : undefined;
      const j = own ?? jsonName.get(k);
      if (j === undefined) throw new Untranscribable(`no json name for ${k}`);
      if (v === undefined || v === null) continue;
      if (j === '') Object.assign(o, v);
      else o[j] = v;
    }
    return o;
  }
  /** An elided `{...}` element of a slice of `elem` structs. */
  elided(elem?: string): unknown {
    const v = this.literalBody(elem);
    if (elem && structs.has(elem) && v && typeof v === 'object' && !Array.isArray(v))
      return withZeros(elem, v as Record<string, unknown>);
    return Array.isArray(v) && v.length === 0 && elem && structs.has(elem) ? withZeros(elem, {}) : v;
  }
  primary(): unknown {
    const t = this.peek();
    if (!t) throw new Untranscribable('end of input');
    if (t.t === 'str') {
      this.i++;
      return t.v;
    }
    if (t.t === 'num') {
      this.i++;
      return Number(t.v);
    }
    if (this.is('(')) {
      this.i++;
      const v = this.expr();
      this.expect(')');
      return v;
    }
    if (this.is('[') || this.is('map')) {
      const elem = this.skipType();
      return this.literalBody(undefined, elem);
    }
    if (t.t !== 'id') throw new Untranscribable(`unexpected ${t.v}`);
    if (t.v === 'func') throw new Untranscribable('closure');
    if (t.v === 'nil') {
      this.i++;
      return undefined;
    }
    if (t.v === 'true' || t.v === 'false') {
      this.i++;
      return t.v === 'true';
    }
    // A (qualified) name, then selectors, calls, index and composite literals.
    let name = this.next().v;
    let val: unknown;
    let resolved = false;
    if (this.env.has(name)) {
      val = structuredClone(this.env.get(name));
      resolved = true;
    }
    while (true) {
      if (this.is('.') && this.peek(1)?.t === 'id') {
        this.i++;
        const f = this.next().v;
        if (resolved) {
          const j = jsonName.get(f) ?? f;
          val = j === '' ? val : ((val as Record<string, unknown>)?.[j] ?? (val as Record<string, unknown>)?.[f]);
        } else name = `${name}.${f}`;
        continue;
      }
      if (this.is('{') && !resolved) {
        // A named type's literal is a struct (or a map): `T{}` is an empty object, not an empty list.
        const typeName = name.split('.').at(-1)!;
        val = this.literalBody(typeName);
        if (Array.isArray(val) && val.length === 0) val = {};
        if (structs.has(typeName) && val && typeof val === 'object' && !Array.isArray(val))
          val = withZeros(typeName, val as Record<string, unknown>);
        resolved = true;
        continue;
      }
      if (this.is('(')) {
        this.i++;
        const a: unknown[] = [];
        while (!this.is(')')) {
          if (
            /^[A-Z]/.test(this.peek().v) &&
            this.is('.', 1) === false &&
            !this.env.has(this.peek().v) &&
            this.peek().t === 'id' &&
            !consts.has(this.peek().v)
          )
            a.push(this.expr());
          else a.push(this.expr());
          if (this.is(',')) this.i++;
          if (this.is('...')) this.i++;
        }
        this.i++;
        val = this.call(name, a);
        resolved = true;
        continue;
      }
      if (this.is('[') && resolved) {
        this.i++;
        const idx = this.expr() as number;
        this.expect(']');
        val = (val as unknown[])[idx];
        continue;
      }
      break;
    }
    if (resolved) return val;
    const last = name.split('.').at(-1)!;
    if (consts.has(last)) return consts.get(last);
    throw new Untranscribable(`unknown name ${name}`);
  }
  call(name: string, a: unknown[]): unknown {
    const last = name.split('.').at(-1)!;
    if (name === 'fmt.Sprintf') {
      let k = 1;
      return String(a[0]).replace(/%[vsd]/g, () => String(a[k++]));
    }
    if (name === 'strings.Repeat') return String(a[0]).repeat(a[1] as number);
    if (name === 'time.Now().UnixNano') return Date.now();
    if (name === 'append')
      return [...((a[0] as unknown[]) ?? []), ...a.slice(1).flatMap((x) => (Array.isArray(x) ? x : [x]))];
    if (a.length === 1) return a[0]; // new(x), ptr.To(x), conversions, pointer helpers
    if (a.length === 0 && /^[A-Z]/.test(last)) return undefined;
    throw new Untranscribable(`call ${name}/${a.length}`);
  }
}

/** Applies the statements of a closure body to `obj` (bound to `param`). */
function runStatements(toks: Tok[], param: string, obj: Record<string, unknown>, env: Env): void {
  const p = new Parser(toks, new Map([...env, [param, obj]]));
  while (p.i < toks.length) {
    if (p.is('for') || p.is('if') || p.is('switch')) throw new Untranscribable(`${p.peek().v} statement`);
    if (p.peek().t === 'id' && p.is(':=', 1)) {
      const name = p.next().v;
      p.i++;
      p.env.set(name, p.expr());
      if (p.is(';')) p.i++;
      continue;
    }
    // lhs: param(.Field | [n])*
    if (p.peek().v !== param) throw new Untranscribable(`statement starting ${p.peek().v}`);
    p.i++;
    const path: (string | number)[] = [];
    while (p.is('.') || p.is('[')) {
      if (p.is('.')) {
        p.i++;
        const f = p.next().v;
        const j = jsonName.get(f);
        if (j === undefined) throw new Untranscribable(`no json name for ${f}`);
        if (j !== '') path.push(j);
      } else {
        p.i++;
        path.push(p.expr() as number);
        p.expect(']');
      }
    }
    p.expect('=');
    const v = p.expr();
    let cur: any = obj;
    for (let k = 0; k < path.length - 1; k++) {
      cur[path[k]] ??= typeof path[k + 1] === 'number' ? [] : {};
      cur = cur[path[k]];
    }
    if (v === undefined) delete cur[path.at(-1)!];
    else cur[path.at(-1)!] = v;
    if (p.is(';')) p.i++;
  }
}

/** Splits a `{ ... }` list of case literals into token ranges. */
function caseRanges(toks: Tok[], start: number): [number, number][] {
  const out: [number, number][] = [];
  let i = start + 1;
  while (toks[i].v !== '}') {
    const s = i;
    let d = 0;
    do {
      if (toks[i].t === 'p' && toks[i].v === '{') d++;
      if (toks[i].t === 'p' && toks[i].v === '}') d--;
      i++;
    } while (d > 0);
    out.push([s, i]);
    if (toks[i].v === ',') i++;
  }
  return out;
}

/** Within a case literal: field name → token range of its value. */
function caseFields(toks: Tok[], [s, e]: [number, number]): Map<string, [number, number]> {
  const m = new Map<string, [number, number]>();
  let i = s + 1;
  while (i < e - 1) {
    const k = toks[i].v;
    i += 2;
    const vs = i;
    let d = 0;
    while (i < e - 1 && !(d === 0 && toks[i].v === ',')) {
      if (['{', '(', '['].includes(toks[i].v) && toks[i].t === 'p') d++;
      if (['}', ')', ']'].includes(toks[i].v) && toks[i].t === 'p') d--;
      i++;
    }
    m.set(k, [vs, i]);
    i++;
  }
  return m;
}

interface Case {
  file: string;
  /** The CRD channels the file runs with (its `//go:build` tag; none: both). */
  channels: string[];
  test: string;
  name: string;
  kind: string;
  object?: unknown;
  status?: unknown;
  update?: unknown;
  wantErrors: string[];
  untranscribed?: string;
}

function transcribeFile(file: string): Case[] {
  const src = show(`tests/cel/${file}`);
  const out: Case[] = [];
  const tag = /^\/\/go:build (\w+)/m.exec(src)?.[1];
  const channels = tag ? [tag] : ['standard', 'experimental'];
  for (const fm of src.matchAll(/^func (Test\w+)\(t \*testing\.T\) \{$/gm)) {
    const test = fm[1];
    const end = src.indexOf('\n}\n', fm.index);
    const body = src.slice(fm.index! + fm[0].length, end);
    const toks = lex(body);
    // Locals before the table: `x := <expr>` (pointer-helper closures are calls we treat as identity).
    const env: Env = new Map();
    const baseKinds = new Map<string, string>();
    let tableAt = -1;
    for (let i = 0; i < toks.length; i++) {
      if (
        toks[i].t === 'id' &&
        toks[i + 1]?.v === ':=' &&
        toks[i + 2]?.v === '[' &&
        toks[i + 3]?.v === ']' &&
        toks[i + 4]?.v === 'struct'
      ) {
        tableAt = i;
        break;
      }
      if (toks[i].v === 'var' && toks[i + 1]?.t === 'id' && toks[i + 3]?.v === '=') {
        const p = new Parser(toks, env);
        p.i = i + 4;
        env.set(toks[i + 1].v, p.expr());
        continue;
      }
      if (toks[i].t === 'id' && toks[i + 1]?.v === ':=' && toks[i + 2]?.v !== 'func' && toks[i + 2]?.v !== 'context') {
        try {
          const p = new Parser(toks, env);
          p.i = i + 2;
          if (toks[i + 3]?.v === '.' && toks[i + 5]?.v === '{') baseKinds.set(toks[i].v, toks[i + 4].v);
          env.set(toks[i].v, p.expr());
        } catch {}
      }
    }
    if (tableAt < 0) continue;
    // The table type, then its cases.
    const p = new Parser(toks, env);
    p.i = tableAt + 2;
    p.skipType();
    const ranges = caseRanges(toks, p.i);
    const afterTable = ranges.at(-1)![1] + 1;
    // The object the t.Run body creates: its first composite literal of an API kind, or a base object.
    const runAt = toks.findIndex((t, i) => i > afterTable && t.v === 'Run');
    const text = (a: number, b: number) => toks.slice(a, b);
    let kind = '';
    let templateAt = -1;
    const API = /^(gatewayv1|v1|xgatewayv1alpha1|gatewayv1alpha2|gatewayv1beta1|v1alpha2|gatewayxv1a1|xv1a1)$/;
    for (let i = runAt; runAt >= 0 && i < toks.length; i++) {
      if (
        (toks[i].v === '&' || toks[i].v === ':=') &&
        API.test(toks[i + 1]?.v ?? '') &&
        toks[i + 4]?.v === '{' &&
        toks[i + 5]?.v === 'ObjectMeta'
      ) {
        kind = toks[i + 3].v;
        templateAt = i + 1;
        break;
      }
    }
    // Locals of the t.Run body before the object (`pathModifier := tc.pathModifier`).
    const runLocals: [string, number][] = [];
    for (let i = runAt; templateAt >= 0 && i < templateAt - 1; i++)
      if (toks[i].t === 'id' && toks[i + 1]?.v === ':=' && i + 2 !== templateAt) runLocals.push([toks[i].v, i + 2]);
    // Or a base object declared before the table (baseGateway := gatewayv1.Gateway{...}).
    const baseName = [...env.keys()].find((k) => (env.get(k) as { metadata?: unknown })?.metadata !== undefined);
    const mutateParam = (r: [number, number]) => {
      const t = text(r[0], r[1]);
      return t[2]?.t === 'id' ? t[2].v : 'x';
    };
    for (const r of ranges) {
      const fields = caseFields(toks, r);
      const get = (k: string) => fields.get(k);
      const nameR = get('name') ?? get('desc');
      const c: Case = { file: `tests/cel/${file}`, channels, test, name: '', kind, wantErrors: [] };
      try {
        c.name = String(new Parser(text(nameR![0], nameR![1]), env).expr());
        const we = get('wantErrors') ?? get('wantError');
        if (we) {
          const v = new Parser(text(we[0], we[1]), env).expr();
          c.wantErrors = (Array.isArray(v) ? v : [v]).filter((x) => x !== '' && x !== undefined) as string[];
        }
        const tcEnv = new Map(env);
        const tc: Record<string, unknown> = {};
        for (const [k, rr] of fields) {
          if (k === 'mutate' || k === 'mutateStatus' || k === 'creationMutate' || k === 'updationMutate') continue;
          tc[k] = new Parser(text(rr[0], rr[1]), env).expr();
        }
        tcEnv.set('tc', tc);
        for (const [n, at] of runLocals) {
          const lp = new Parser(toks, tcEnv);
          lp.i = at;
          tcEnv.set(n, lp.expr());
        }
        let obj: Record<string, unknown>;
        if (templateAt >= 0) {
          const tp = new Parser(toks, tcEnv);
          tp.i = templateAt;
          obj = tp.expr() as Record<string, unknown>;
        } else if (baseName) {
          obj = structuredClone(env.get(baseName)) as Record<string, unknown>;
          c.kind = kind = baseKinds.get(baseName) ?? baseName;
          // `gw := baseGateway.DeepCopy()` then assignments in the t.Run body, up to the create.
          const d = toks.findIndex((t, i) => i > runAt && t.v === baseName && toks[i + 2]?.v === 'DeepCopy');
          if (d > 0 && toks[d - 1].v === ':=') {
            const from = d + 5;
            const to = toks.findIndex(
              (t, i) => i > from && ((t.v === 'err' && toks[i + 1].v === ':=') || t.v === 'if'),
            );
            if (toks[to]?.v === 'err') runStatements(toks.slice(from, to), toks[d - 2].v, obj, tcEnv);
          }
        } else throw new Untranscribable('no object template');
        const closure = (k: string) => {
          const rr = get(k);
          if (!rr) return undefined;
          const t = text(rr[0], rr[1]);
          const open = t.findIndex((x) => x.v === '{');
          return { param: t[2].v, body: t.slice(open + 1, t.length - 1) };
        };
        for (const k of ['mutate', 'creationMutate']) {
          const cl = closure(k);
          if (cl) runStatements(cl.body, cl.param, obj, tcEnv);
        }
        c.object = obj;
        const st = closure('mutateStatus');
        if (st) {
          const o2 = structuredClone(obj);
          runStatements(st.body, st.param, o2, tcEnv);
          c.status = o2.status;
        }
        const up = closure('updationMutate');
        if (up) {
          const o2 = structuredClone(obj);
          runStatements(up.body, up.param, o2, tcEnv);
          c.update = o2;
        }
      } catch (e) {
        if (!(e instanceof Untranscribable)) throw e;
        c.untranscribed = e.message;
        delete c.object;
      }
      void mutateParam;
      out.push(c);
    }
  }
  return out;
}

const files = git('ls-tree', '--name-only', TAG, 'tests/cel/')
  .split('\n')
  .filter((f) => f.endsWith('_test.go') && !f.endsWith('main_test.go'))
  .map((f) => f.replace('tests/cel/', ''));
const cases = files.flatMap(transcribeFile);
const outFile = join(import.meta.dirname, '..', 'tests', 'gateway-api', 'cel-tables.json');
writeFileSync(
  outFile,
  `${JSON.stringify({ source: `kubernetes-sigs/gateway-api ${TAG} tests/cel`, cases }, null, 2)}\n`,
);
// In the project's JSON format (Biome), so that lint passes on the generated file.
execFileSync('npx', ['biome', 'format', '--write', outFile], { stdio: 'ignore' });
const bad = cases.filter((c) => c.untranscribed);
process.stdout.write(`${cases.length} cases, ${bad.length} not transcribed\n`);
for (const b of bad) process.stdout.write(`  ${b.file} ${b.test} ${JSON.stringify(b.name)}: ${b.untranscribed}\n`);
