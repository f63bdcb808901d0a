// Upstream's CEL test files read as tables (scripts/transcribe-gateway-api-cel.ts): per `func TestX(t)`, the locals
// before its table (`x := ...`, `var x T = ...`, a base object), the table's cases, and how the t.Run body builds the
// object (a composite literal reading `tc.<field>`, or a base object the case's closures and the body assign to);
// each case evaluated to the object to create, the status or update to write after it, and the expected errors.
import { type Env, lex, Parser, runStatements, type Tok, Untranscribable } from './go-reader.ts';

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

export interface Case {
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

const API = /^(gatewayv1|v1|xgatewayv1alpha1|gatewayv1alpha2|gatewayv1beta1|v1alpha2|gatewayxv1a1|xv1a1)$/;
const CLOSURES = new Set(['mutate', 'mutateStatus', 'creationMutate', 'updationMutate']);

/** A test function's locals before its table, and where the table starts (-1: no table). */
function locals(toks: Tok[]): { env: Env; baseKinds: Map<string, string>; tableAt: number } {
  const env: Env = new Map();
  const baseKinds = new Map<string, string>();
  for (let i = 0; i < toks.length; i++) {
    const isTable =
      toks[i + 1]?.v === ':=' && toks[i + 2]?.v === '[' && toks[i + 3]?.v === ']' && toks[i + 4]?.v === 'struct';
    if (toks[i].t === 'id' && isTable) return { env, baseKinds, tableAt: i };
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
      } catch {
        // A local the reader cannot evaluate (a closure): cases that use it say so.
      }
    }
  }
  return { env, baseKinds, tableAt: -1 };
}

interface Template {
  kind: string;
  /** Token index of the object's composite literal in the t.Run body, or -1. */
  at: number;
  /** Locals of the t.Run body before the object (`pathModifier := tc.pathModifier`). */
  runLocals: [string, number][];
  runAt: number;
}

/** How the t.Run body after the table builds the object. */
function template(toks: Tok[], afterTable: number): Template {
  const runAt = toks.findIndex((t, i) => i > afterTable && t.v === 'Run');
  let kind = '';
  let at = -1;
  for (let i = runAt; runAt >= 0 && i < toks.length; i++) {
    const literal = toks[i + 4]?.v === '{' && toks[i + 5]?.v === 'ObjectMeta';
    if ((toks[i].v === '&' || toks[i].v === ':=') && API.test(toks[i + 1]?.v ?? '') && literal) {
      kind = toks[i + 3].v;
      at = i + 1;
      break;
    }
  }
  const runLocals: [string, number][] = [];
  for (let i = runAt; at >= 0 && i < at - 1; i++)
    if (toks[i].t === 'id' && toks[i + 1]?.v === ':=' && i + 2 !== at) runLocals.push([toks[i].v, i + 2]);
  return { kind, at, runLocals, runAt };
}

interface FnContext {
  toks: Tok[];
  env: Env;
  baseKinds: Map<string, string>;
  tpl: Template;
  /** A base object declared before the table (baseGateway := gatewayv1.Gateway{...}). */
  baseName?: string;
}

/** The object a case creates, before its closures run. */
function baseObject(f: FnContext, c: Case, tcEnv: Env): Record<string, unknown> {
  const { toks, tpl, baseName } = f;
  if (tpl.at >= 0) {
    const tp = new Parser(toks, tcEnv);
    tp.i = tpl.at;
    return tp.expr() as Record<string, unknown>;
  }
  if (!baseName) throw new Untranscribable('no object template');
  const obj = structuredClone(f.env.get(baseName)) as Record<string, unknown>;
  c.kind = f.baseKinds.get(baseName) ?? baseName;
  // `gw := baseGateway.DeepCopy()` then assignments in the t.Run body, up to the create.
  const d = toks.findIndex((t, i) => i > tpl.runAt && t.v === baseName && toks[i + 2]?.v === 'DeepCopy');
  if (d > 0 && toks[d - 1].v === ':=') {
    const from = d + 5;
    const to = toks.findIndex((t, i) => i > from && ((t.v === 'err' && toks[i + 1].v === ':=') || t.v === 'if'));
    if (toks[to]?.v === 'err') runStatements(toks.slice(from, to), toks[d - 2].v, obj, tcEnv);
  }
  return obj;
}

/** One case: its name and expectations, and the objects it writes. */
function transcribeCase(f: FnContext, r: [number, number], c: Case): void {
  const { toks, env } = f;
  const fields = caseFields(toks, r);
  const text = (rr: [number, number]) => toks.slice(rr[0], rr[1]);
  const nameR = fields.get('name') ?? fields.get('desc');
  c.name = String(new Parser(text(nameR!), env).expr());
  const we = fields.get('wantErrors') ?? fields.get('wantError');
  if (we) {
    const v = new Parser(text(we), env).expr();
    c.wantErrors = (Array.isArray(v) ? v : [v]).filter((x) => x !== '' && x !== undefined) as string[];
  }
  const tcEnv = new Map(env);
  const tc: Record<string, unknown> = {};
  for (const [k, rr] of fields) if (!CLOSURES.has(k)) tc[k] = new Parser(text(rr), env).expr();
  tcEnv.set('tc', tc);
  for (const [n, at] of f.tpl.runLocals) {
    const lp = new Parser(toks, tcEnv);
    lp.i = at;
    tcEnv.set(n, lp.expr());
  }
  const obj = baseObject(f, c, tcEnv);
  const closure = (k: string) => {
    const rr = fields.get(k);
    if (!rr) return undefined;
    const t = text(rr);
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
}

/** Every case of one test file (`src`, at `tests/cel/<file>`). */
export function transcribeFile(file: string, src: string): Case[] {
  const out: Case[] = [];
  const tag = /^\/\/go:build (\w+)/m.exec(src)?.[1];
  const channels = tag ? [tag] : ['standard', 'experimental'];
  for (const fm of src.matchAll(/^func (Test\w+)\(t \*testing\.T\) \{$/gm)) {
    const test = fm[1];
    const end = src.indexOf('\n}\n', fm.index);
    const toks = lex(src.slice(fm.index! + fm[0].length, end));
    const { env, baseKinds, tableAt } = locals(toks);
    if (tableAt < 0) continue;
    const p = new Parser(toks, env);
    p.i = tableAt + 2;
    p.skipType();
    const ranges = caseRanges(toks, p.i);
    const tpl = template(toks, ranges.at(-1)![1] + 1);
    const baseName = [...env.keys()].find((k) => (env.get(k) as { metadata?: unknown })?.metadata !== undefined);
    const f: FnContext = { toks, env, baseKinds, tpl, baseName };
    for (const r of ranges) {
      const c: Case = { file: `tests/cel/${file}`, channels, test, name: '', kind: tpl.kind, wantErrors: [] };
      try {
        transcribeCase(f, r, c);
      } catch (e) {
        if (!(e instanceof Untranscribable)) throw e;
        c.untranscribed = e.message;
        delete c.object;
      }
      out.push(c);
    }
  }
  return out;
}
