// A reader for the subset of Go that upstream's CEL test tables use (scripts/transcribe-gateway-api-cel.ts):
// tokens, expressions (composite literals, `new(x)`/`&x`/pointer helpers, conversions, constants, `fmt.Sprintf`,
// `strings.Repeat`, `append`) evaluated to JSON with the API types' JSON names, and the assignment statements of
// `mutate` closures. Anything else throws Untranscribable, which marks the case as not transcribed.
import { consts, jsonName, structs, withZeros } from './go-types.ts';

export type Tok = { t: 'id' | 'str' | 'num' | 'p'; v: string };
export function lex(src: string): Tok[] {
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

export class Untranscribable extends Error {}

export type Env = Map<string, unknown>;

export class Parser {
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
export function runStatements(toks: Tok[], param: string, obj: Record<string, unknown>, env: Env): void {
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
