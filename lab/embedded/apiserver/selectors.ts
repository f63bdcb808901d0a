// Label and field selectors, with the syntax and errors of k8s.io/apimachinery's labels and fields packages.
import { errors } from './errors.ts';

export type LabelRequirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] };

export type LabelSelector = LabelRequirement[];

const KEY_RE = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, sel: string): void {
  if (!KEY_RE.test(key) || key.length > 316)
    throw errors.badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${sel}"`);
}
function checkValue(v: string, sel: string): void {
  if (v.length > 63 || !VALUE_RE.test(v))
    throw errors.badRequest(`unable to parse requirement: invalid label value: "${v}" in selector "${sel}"`);
}

/** Splits on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function parseLabelSelector(sel: string | null | undefined): LabelSelector {
  if (!sel?.trim()) return [];
  const reqs: LabelSelector = [];
  for (const raw of splitTop(sel)) {
    const part = raw.trim();
    if (!part) throw errors.badRequest(`unable to parse requirement: found '', expected: identifier in "${sel}"`);
    let m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
    if (m) {
      checkKey(m[1], sel);
      const values = m[3]
        .split(',')
        .map((v) => v.trim())
        .filter((v, _i, a) => v !== '' || a.length === 1);
      for (const v of values) checkValue(v, sel);
      reqs.push({ key: m[1], op: m[2] as 'in' | 'notin', values });
      continue;
    }
    m = /^(\S+?)\s*(==|!=|=)\s*(\S*)$/.exec(part);
    if (m) {
      checkKey(m[1], sel);
      checkValue(m[3], sel);
      reqs.push({ key: m[1], op: m[2] === '!=' ? '!=' : '=', value: m[3] });
      continue;
    }
    m = /^!\s*(\S+)$/.exec(part);
    if (m) {
      checkKey(m[1], sel);
      reqs.push({ key: m[1], op: '!' });
      continue;
    }
    if (/^\S+$/.test(part) && !/[=!()]/.test(part)) {
      checkKey(part, sel);
      reqs.push({ key: part, op: 'exists' });
      continue;
    }
    throw errors.badRequest(`unable to parse requirement: invalid label selector "${sel}"`);
  }
  return reqs;
}

export function matchLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const r of sel) {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
        if (!has || v !== r.value) return false;
        break;
      case '!=':
        if (has && v === r.value) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v)) return false;
        break;
    }
  }
  return true;
}

/** A metav1.LabelSelector object (matchLabels + matchExpressions) as requirements; undefined = matches nothing. */
export function fromLabelSelectorObject(
  s:
    | {
        matchLabels?: Record<string, string>;
        matchExpressions?: { key: string; operator: string; values?: string[] }[];
      }
    | undefined,
): LabelSelector | undefined {
  if (!s) return undefined;
  const reqs: LabelSelector = [];
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) reqs.push({ key: k, op: '=', value: v });
  for (const e of s.matchExpressions ?? []) {
    const op = e.operator;
    if (op === 'In') reqs.push({ key: e.key, op: 'in', values: e.values ?? [] });
    else if (op === 'NotIn') reqs.push({ key: e.key, op: 'notin', values: e.values ?? [] });
    else if (op === 'Exists') reqs.push({ key: e.key, op: 'exists' });
    else if (op === 'DoesNotExist') reqs.push({ key: e.key, op: '!' });
  }
  return reqs;
}

/**
 * A selector in the text form of apimachinery's `labels.Selector.String()`: requirements sorted by key, `in`/`notin`
 * values sorted (what a Scale's `status.selector` carries, and what `kubectl get -l` accepts).
 */
export function formatLabelSelector(sel: LabelSelector): string {
  return [...sel]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => {
      switch (r.op) {
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
        case '=':
        case '!=':
          return `${r.key}${r.op}${r.value}`;
        default:
          return `${r.key} ${r.op} (${[...r.values].sort().join(',')})`;
      }
    })
    .join(',');
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Parses a field selector; `allowed` are the fields this resource supports (unknown → 400, as Kubernetes does). */
export function parseFieldSelector(
  sel: string | null | undefined,
  allowed: Set<string>,
  resourceDesc: string,
): FieldRequirement[] {
  if (!sel?.trim()) return [];
  const out: FieldRequirement[] = [];
  for (const raw of sel.split(',')) {
    const part = raw.trim();
    const m = /^([^=!]+?)\s*(==|!=|=)\s*(.*)$/.exec(part);
    if (!m) throw errors.badRequest(`invalid selector: '${sel}'; can't understand '${part}'`);
    const field = m[1].trim();
    if (!allowed.has(field))
      throw errors.badRequest(`field label not supported: ${field}`, [
        { reason: 'FieldValueInvalid', field, message: `field label not supported for ${resourceDesc}` },
      ]);
    out.push({ field, op: m[2] === '!=' ? '!=' : '=', value: unescapeField(m[3]) });
  }
  return out;
}

function unescapeField(v: string): string {
  return v.replace(/\\(.)/g, '$1');
}

export function matchFields(reqs: FieldRequirement[], fields: Record<string, string>): boolean {
  for (const r of reqs) {
    const v = fields[r.field] ?? '';
    if (r.op === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}
