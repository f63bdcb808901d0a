// Label and field selectors, the one implementation of the project, with the syntax, messages and meaning of
// k8s.io/apimachinery: the text form of `labels.Parse` / `Selector.String()` (list and watch `labelSelector`, a Scale's
// `status.selector`), the object form `metav1.LabelSelector` (`matchLabels` + `matchExpressions`, as
// `metav1.LabelSelectorAsSelector` reads it), a Service's plain map (`labels.SelectorFromSet`) and the `fields`
// package's `fieldSelector`. The embedded API server, the workload controllers and the control plane all call it;
// it knows nothing of HTTP: a malformed selector throws `SelectorError`, which the API server answers as 400.

/** A selector that does not parse, or an object selector with an unknown operator. */
export class SelectorError extends Error {
  /** Status causes for the API server's 400 (field selectors name the field). */
  readonly causes?: { reason: string; field: string; message: string }[];
  constructor(message: string, causes?: { reason: string; field: string; message: string }[]) {
    super(message);
    this.name = 'SelectorError';
    this.causes = causes;
  }
}

/** One requirement of a parsed selector (labels.Requirement): `exists` is `key`, `!` is `!key`. */
export type LabelRequirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] };

/** metav1.LabelSelector: the object form that Deployments, ClusterRole aggregation and Gateway API carry. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const KEY_RE = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, sel: string): void {
  if (!KEY_RE.test(key) || key.length > 316)
    throw new SelectorError(`unable to parse requirement: invalid label key "${key}" in selector "${sel}"`);
}
function checkValue(v: string, sel: string): void {
  if (v.length > 63 || !VALUE_RE.test(v))
    throw new SelectorError(`unable to parse requirement: invalid label value: "${v}" in selector "${sel}"`);
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

/** One comma-separated term of a label selector's text form. */
function parseRequirement(part: string, sel: string): LabelRequirement {
  let m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
  if (m) {
    checkKey(m[1], sel);
    const values = m[3]
      .split(',')
      .map((v) => v.trim())
      .filter((v, _i, a) => v !== '' || a.length === 1);
    for (const v of values) checkValue(v, sel);
    return { key: m[1], op: m[2] as 'in' | 'notin', values };
  }
  m = /^(\S+?)\s*(==|!=|=)\s*(\S*)$/.exec(part);
  if (m) {
    checkKey(m[1], sel);
    checkValue(m[3], sel);
    return { key: m[1], op: m[2] === '!=' ? '!=' : '=', value: m[3] };
  }
  m = /^!\s*(\S+)$/.exec(part);
  if (m) {
    checkKey(m[1], sel);
    return { key: m[1], op: '!' };
  }
  if (/^\S+$/.test(part) && !/[=!()]/.test(part)) {
    checkKey(part, sel);
    return { key: part, op: 'exists' };
  }
  throw new SelectorError(`unable to parse requirement: invalid label selector "${sel}"`);
}

/** labels.Parse: the text form (`a=b,c!=d,e in (f,g),!h,i`); empty or absent = every object. */
export function parseLabelSelector(sel: string | null | undefined): LabelRequirement[] {
  if (!sel?.trim()) return [];
  const reqs: LabelRequirement[] = [];
  for (const raw of splitTop(sel)) {
    const part = raw.trim();
    if (!part) throw new SelectorError(`unable to parse requirement: found '', expected: identifier in "${sel}"`);
    reqs.push(parseRequirement(part, sel));
  }
  return reqs;
}

/** labels.Selector.Matches: every requirement holds for `labels` (no requirement: every label set). */
export function matchRequirements(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
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

const OPERATORS: Record<string, 'in' | 'notin' | 'exists' | '!'> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * metav1.LabelSelectorAsSelector: an absent selector is `undefined` (selects nothing), `{}` is no requirement
 * (selects everything); an operator other than In, NotIn, Exists and DoesNotExist throws SelectorError with
 * apimachinery's message.
 */
export function labelSelectorRequirements(sel: LabelSelector | null | undefined): LabelRequirement[] | undefined {
  if (!sel) return undefined;
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key, op: '=', value });
  for (const e of sel.matchExpressions ?? []) {
    const op = OPERATORS[e.operator];
    if (!op) throw new SelectorError(`"${e.operator}" is not a valid label selector operator`);
    reqs.push(op === 'in' || op === 'notin' ? { key: e.key, op, values: e.values ?? [] } : { key: e.key, op });
  }
  return reqs;
}

/**
 * Whether a metav1.LabelSelector selects `labels`, as `LabelSelectorAsSelector(sel).Matches(labels)`: an absent
 * selector selects nothing, `{}` everything, and an invalid one (unknown operator) nothing.
 */
export function matchesLabelSelector(
  labels: Record<string, string> | undefined,
  sel: LabelSelector | null | undefined,
): boolean {
  let reqs: LabelRequirement[] | undefined;
  try {
    reqs = labelSelectorRequirements(sel);
  } catch (e) {
    if (e instanceof SelectorError) return false;
    throw e;
  }
  return reqs !== undefined && matchRequirements(reqs, labels);
}

/** labels.SelectorFromSet(set).Matches(labels): a Service's `spec.selector`; every pair must be present. */
export function matchesLabelSet(labels: Record<string, string> | undefined, set: Record<string, string>): boolean {
  const l = labels ?? {};
  return Object.entries(set).every(([k, v]) => l[k] === v);
}

/**
 * A selector in the text form of apimachinery's `labels.Selector.String()`: requirements sorted by key, `in`/`notin`
 * values sorted (what a Scale's `status.selector` carries, and what `kubectl get -l` accepts).
 */
export function formatLabelSelector(sel: LabelRequirement[]): string {
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

/**
 * fields.ParseSelector, restricted to the fields a resource supports (`allowed`; another field throws
 * SelectorError "field label not supported", as the API server answers it). `resourceDesc` names the resource in
 * the cause, e.g. `"Pod"`.
 */
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
    if (!m) throw new SelectorError(`invalid selector: '${sel}'; can't understand '${part}'`);
    const field = m[1].trim();
    if (!allowed.has(field))
      throw new SelectorError(`field label not supported: ${field}`, [
        { reason: 'FieldValueInvalid', field, message: `field label not supported for ${resourceDesc}` },
      ]);
    out.push({ field, op: m[2] === '!=' ? '!=' : '=', value: unescapeField(m[3]) });
  }
  return out;
}

function unescapeField(v: string): string {
  return v.replace(/\\(.)/g, '$1');
}

/** fields.Selector.Matches over an object's field values (a field the object lacks is ""). */
export function matchFields(reqs: FieldRequirement[], fields: Record<string, string>): boolean {
  for (const r of reqs) {
    const v = fields[r.field] ?? '';
    if (r.op === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}
