// A strict reader of the Prometheus text exposition format (version 0.0.4) for tests: it parses an exposition into
// families and samples and lists every rule of the format the text breaks, so a test can assert "no problems" on the
// proxy's /stats/prometheus and the control plane's /metrics without `promtool` (a Go binary npm cannot install).
// Written against https://prometheus.io/docs/instrumenting/exposition_formats/ ("Text format details"), with the
// histogram rules OpenMetrics makes explicit (https://prometheus.io/docs/specs/om/open_metrics_spec/, "Histogram":
// a +Inf bucket per series equal to _count, buckets cumulative, le ascending). It checks what `promtool check
// metrics` rejects (its parser: syntax, escapes, TYPE/HELP placement and duplicates) plus what the spec requires of
// a whole exposition (one group per family, unique series, histogram and summary consistency). promtool's naming
// lint (HELP text, _total suffixes, units) is left out: Envoy's own names break it by design.
// The npm parsers tried (parse-prometheus-text-format 1.1.1) accept all of these errors, hence this file.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** Metric name as written (`x_bucket`, `x_sum`, ...). */
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The family the sample belongs to (`x` for `x_bucket` of histogram `x`). */
  family: string;
  line: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` of each family that has one. */
  types: Map<string, MetricType>;
  /** `# HELP` text of each family that has one. */
  help: Map<string, string>;
  /** Every rule broken, as `line N: what` (whole-exposition rules name the family instead). */
  problems: string[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
// Go's strconv.ParseFloat forms the format allows, plus Prometheus' Inf/NaN spellings.
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;
const TIMESTAMP = /^-?\d+$/;

/** Parses `text` and lists the format's rules it breaks. */
export function parseExposition(text: string): Exposition {
  const r = new Reader();
  if (text.length > 0 && !text.endsWith('\n')) r.problem(0, 'the last line must end with a line feed');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (let i = 0; i < lines.length; i++) r.line(i + 1, lines[i]!);
  r.finish();
  return { samples: r.samples, types: r.types, help: r.help, problems: r.problems };
}

/** The problems only; `[]` for a valid exposition. */
export function checkExposition(text: string): string[] {
  return parseExposition(text).problems;
}

class Reader {
  readonly samples: Sample[] = [];
  readonly types = new Map<string, MetricType>();
  readonly help = new Map<string, string>();
  readonly problems: string[] = [];
  private readonly series = new Map<string, number>();
  /** Families whose group has ended (another family's line came after them). */
  private readonly closed = new Set<string>();
  private readonly sampled = new Set<string>();
  private current: string | undefined;

  problem(line: number, msg: string): void {
    this.problems.push(line > 0 ? `line ${line}: ${msg}` : msg);
  }

  line(n: number, raw: string): void {
    const line = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (line === '') return;
    if (line.startsWith('#')) this.comment(n, line.slice(1).replace(/^[ \t]+/, ''));
    else this.sample(n, line);
  }

  /** All lines of a family form one group: entering a family closes the previous one for good. */
  private enter(n: number, family: string): void {
    if (family === this.current) return;
    if (this.closed.has(family)) this.problem(n, `${family}: lines of one metric family must form a single group`);
    if (this.current !== undefined) this.closed.add(this.current);
    this.current = family;
  }

  private comment(n: number, body: string): void {
    const [keyword] = body.split(/[ \t]/, 1);
    if (keyword !== 'HELP' && keyword !== 'TYPE') return; // a plain comment
    const rest = body.slice(keyword.length).replace(/^[ \t]+/, '');
    const name = METRIC_NAME.exec(rest)?.[0];
    const after = name === undefined ? '' : rest.slice(name.length);
    if (name === undefined || (after !== '' && !/^[ \t]/.test(after))) {
      this.problem(n, `# ${keyword} needs a valid metric name: ${JSON.stringify(rest.split(/[ \t]/, 1)[0])}`);
      return;
    }
    const value = after.replace(/^[ \t]+/, '');
    this.enter(n, name);
    if (keyword === 'HELP') {
      if (this.help.has(name)) this.problem(n, `${name}: second HELP line`);
      const bad = /\\(?![\\n])/.exec(value);
      if (bad) this.problem(n, `${name}: HELP text may only escape \\\\ and \\n`);
      if (this.sampled.has(name)) this.problem(n, `${name}: HELP line after the family's samples`);
      this.help.set(
        name,
        value.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\')),
      );
      return;
    }
    const tokens = value.split(/[ \t]+/);
    if (tokens.length !== 1 || !TYPES.has(tokens[0]!)) {
      this.problem(
        n,
        `${name}: TYPE must be one of counter, gauge, histogram, summary, untyped: ${JSON.stringify(value)}`,
      );
      return;
    }
    if (this.types.has(name)) this.problem(n, `${name}: second TYPE line`);
    if (this.sampled.has(name)) this.problem(n, `${name}: TYPE line after the family's samples`);
    this.types.set(name, tokens[0] as MetricType);
  }

  private sample(n: number, line: string): void {
    const name = METRIC_NAME.exec(line)?.[0];
    if (name === undefined) {
      this.problem(n, `not a sample line (no metric name): ${JSON.stringify(line)}`);
      return;
    }
    let rest = line.slice(name.length).replace(/^[ \t]+/, '');
    const labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const parsed = parseLabels(rest);
      if (typeof parsed === 'string') {
        this.problem(n, `${name}: ${parsed}`);
        return;
      }
      for (const [k, v] of parsed.pairs) {
        if (k in labels) this.problem(n, `${name}: label ${k} given twice`);
        if (k.startsWith('__')) this.problem(n, `${name}: label names starting with __ are reserved: ${k}`);
        labels[k] = v;
      }
      rest = parsed.rest.replace(/^[ \t]+/, '');
    }
    const tokens = rest.split(/[ \t]+/);
    if (tokens.length > 2 || !FLOAT.test(tokens[0]!)) {
      this.problem(n, `${name}: expected "<value> [timestamp]", got ${JSON.stringify(rest.trim())}`);
      return;
    }
    if (tokens[1] !== undefined && !TIMESTAMP.test(tokens[1])) {
      this.problem(n, `${name}: the timestamp must be an integer (milliseconds): ${tokens[1]}`);
      return;
    }
    const family = this.familyOf(name);
    this.enter(n, family);
    this.sampled.add(family);
    const key = seriesKey(name, labels);
    const first = this.series.get(key);
    if (first !== undefined) this.problem(n, `duplicate series ${key} (first on line ${first})`);
    else this.series.set(key, n);
    this.samples.push({ name, labels, value: parseValue(tokens[0]!), family, line: n });
  }

  /** `x_bucket`, `x_sum`, `x_count` belong to histogram `x`; `x_sum`, `x_count` (and `x`) to summary `x`. */
  private familyOf(name: string): string {
    const m = /^(.*)_(bucket|sum|count)$/.exec(name);
    if (m) {
      const t = this.types.get(m[1]!);
      if (t === 'histogram' || (t === 'summary' && m[2] !== 'bucket')) return m[1]!;
    }
    return name;
  }

  /** Whole-exposition rules: histogram and summary series. */
  finish(): void {
    const byFamily = new Map<string, Sample[]>();
    for (const s of this.samples) {
      const t = this.types.get(s.family);
      if (t !== 'histogram' && t !== 'summary') continue;
      const list = byFamily.get(s.family) ?? [];
      list.push(s);
      byFamily.set(s.family, list);
    }
    for (const [family, samples] of byFamily) {
      if (this.types.get(family) === 'histogram') this.histogram(family, samples);
      else this.summary(family, samples);
    }
  }

  private histogram(family: string, samples: Sample[]): void {
    const series = new Map<string, { buckets: Sample[]; sum?: Sample; count?: Sample }>();
    const of = (s: Sample, drop?: string) => {
      const key = seriesKey(family, without(s.labels, drop));
      const e = series.get(key) ?? { buckets: [] };
      series.set(key, e);
      return e;
    };
    for (const s of samples) {
      if (s.name === family) {
        this.problem(
          s.line,
          `${family}: a histogram's samples are ${family}_bucket, ${family}_sum and ${family}_count`,
        );
      } else if (s.name.endsWith('_bucket')) {
        if (s.labels.le === undefined || !FLOAT.test(s.labels.le)) {
          this.problem(s.line, `${s.name}: a bucket needs an le label with a number: ${JSON.stringify(s.labels.le)}`);
        } else of(s, 'le').buckets.push(s);
      } else if (s.name.endsWith('_sum')) of(s).sum = s;
      else of(s).count = s;
    }
    for (const [key, e] of series) {
      let prevLe = Number.NEGATIVE_INFINITY;
      let prevCount = 0;
      for (const b of e.buckets) {
        const le = parseValue(b.labels.le!);
        if (!(le > prevLe)) this.problem(b.line, `${key}: buckets must be in increasing order of le (${b.labels.le})`);
        if (b.value < prevCount) this.problem(b.line, `${key}: bucket counts must be cumulative (le="${b.labels.le}")`);
        prevLe = le;
        prevCount = b.value;
      }
      const inf = e.buckets.at(-1);
      if (!inf || parseValue(inf.labels.le!) !== Number.POSITIVE_INFINITY) {
        this.problem(0, `${key}: a histogram series needs a last bucket with le="+Inf"`);
      }
      if (!e.count) this.problem(0, `${key}: no ${family}_count`);
      else if (inf && inf.value !== e.count.value) {
        this.problem(
          e.count.line,
          `${key}: ${family}_count ${e.count.value} differs from the +Inf bucket ${inf.value}`,
        );
      }
      if (!e.sum) this.problem(0, `${key}: no ${family}_sum`);
    }
  }

  private summary(family: string, samples: Sample[]): void {
    const last = new Map<string, number>();
    for (const s of samples) {
      if (s.name !== family) continue;
      const q = s.labels.quantile;
      if (q === undefined || !FLOAT.test(q)) {
        this.problem(s.line, `${family}: a summary quantile needs a quantile label with a number`);
        continue;
      }
      const key = seriesKey(family, without(s.labels, 'quantile'));
      const v = parseValue(q);
      if (!(v > (last.get(key) ?? Number.NEGATIVE_INFINITY))) {
        this.problem(s.line, `${key}: quantiles must be in increasing order (${q})`);
      }
      last.set(key, v);
    }
  }
}

/** `{a="1",b="x\"y"} rest` → pairs and what follows the closing brace; or what is wrong. */
function parseLabels(text: string): { pairs: Array<[string, string]>; rest: string } | string {
  const pairs: Array<[string, string]> = [];
  let i = 1;
  const blanks = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  for (;;) {
    blanks();
    if (text[i] === '}') return { pairs, rest: text.slice(i + 1) };
    const name = LABEL_NAME.exec(text.slice(i))?.[0];
    if (name === undefined) return `invalid label name at ${JSON.stringify(text.slice(i, i + 20))}`;
    i += name.length;
    blanks();
    if (text[i] !== '=') return `expected = after label ${name}`;
    i++;
    blanks();
    if (text[i] !== '"') return `label ${name}: the value must be in double quotes`;
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) return `label ${name}: unterminated value`;
      if (c === '"') break;
      if (c === '\\') {
        const e = text[i + 1];
        if (e === '\\' || e === '"') value += e;
        else if (e === 'n') value += '\n';
        else return `label ${name}: invalid escape \\${e ?? ''} (only \\\\, \\" and \\n)`;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    i++;
    pairs.push([name, value]);
    blanks();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') return `expected , or } after label ${name}`;
  }
}

function parseValue(v: string): number {
  const l = v.toLowerCase().replace(/^\+/, '');
  if (l === 'inf' || l === 'infinity') return Number.POSITIVE_INFINITY;
  if (l === '-inf' || l === '-infinity') return Number.NEGATIVE_INFINITY;
  if (l === 'nan') return Number.NaN;
  return Number(v);
}

function without(labels: Record<string, string>, drop: string | undefined): Record<string, string> {
  if (drop === undefined) return labels;
  const { [drop]: _, ...rest } = labels;
  return rest;
}

/** `name{a="1",b="2"}` with labels in name order, so label order does not make two series. */
function seriesKey(name: string, labels: Record<string, string>): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return name;
  return `${name}{${keys.map((k) => `${k}=${JSON.stringify(labels[k])}`).join(',')}}`;
}
