// The subset of Kubernetes JSONPath that CRD printer columns and selectable fields use: `.a.b`, `.a[0]`, `.a[*].b`,
// `.a['x.y']`, `.a[?(@.type=="Ready")].status`. Returns all matches (the first is printed).

export function evalJsonPath(obj: unknown, path: string): unknown[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  let cur: unknown[] = [obj];
  let i = 0;
  while (i < p.length && cur.length) {
    const ch = p[i];
    if (ch === '.') {
      i++;
      const m = /^[A-Za-z0-9_\-$]+/.exec(p.slice(i));
      if (!m) continue;
      i += m[0].length;
      cur = cur.flatMap((v) => child(v, m[0]));
    } else if (ch === '[') {
      const end = findClose(p, i);
      const inner = p.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*')
        cur = cur.flatMap((v) => (Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : []));
      else if (/^-?\d+$/.test(inner)) {
        const n = Number(inner);
        cur = cur.flatMap((v) =>
          Array.isArray(v) ? [v[n < 0 ? v.length + n : n]].filter((x) => x !== undefined) : [],
        );
      } else if (/^['"].*['"]$/.test(inner)) cur = cur.flatMap((v) => child(v, inner.slice(1, -1)));
      else if (inner.startsWith('?(') && inner.endsWith(')')) {
        const f = parseFilter(inner.slice(2, -1));
        cur = cur.flatMap((v) => (Array.isArray(v) ? v.filter(f) : []));
      } else cur = [];
    } else {
      const m = /^[A-Za-z0-9_\-$]+/.exec(p.slice(i));
      if (!m) break;
      i += m[0].length;
      cur = cur.flatMap((v) => child(v, m[0]));
    }
  }
  return cur;
}

function child(v: unknown, k: string): unknown[] {
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, k)) return [(v as any)[k]];
  return [];
}

function findClose(s: string, open: number): number {
  let depth = 0;
  let q: string | undefined;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (q) {
      if (c === q) q = undefined;
      continue;
    }
    if (c === '"' || c === "'") q = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  return s.length;
}

function parseFilter(expr: string): (v: unknown) => boolean {
  const m = /^@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(expr.trim());
  if (!m) {
    const e = /^@((?:\.[A-Za-z0-9_-]+)+)$/.exec(expr.trim());
    if (e) return (v) => evalJsonPath(v, e[1]).length > 0;
    return () => false;
  }
  const [, path, op, rawRhs] = m;
  let rhs: unknown = rawRhs.trim();
  if (/^['"].*['"]$/.test(rhs as string)) rhs = (rhs as string).slice(1, -1);
  else if (/^-?\d+(\.\d+)?$/.test(rhs as string)) rhs = Number(rhs);
  else if (rhs === 'true' || rhs === 'false') rhs = rhs === 'true';
  return (v) => {
    const l = evalJsonPath(v, path)[0];
    switch (op) {
      case '==':
        return l === rhs;
      case '!=':
        return l !== rhs;
      case '<':
        return (l as number) < (rhs as number);
      case '>':
        return (l as number) > (rhs as number);
      case '<=':
        return (l as number) <= (rhs as number);
      default:
        return (l as number) >= (rhs as number);
    }
  };
}
