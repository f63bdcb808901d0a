// Envoy-style stats: counters, gauges and histograms named by dotted paths (cluster.<name>.upstream_rq_total),
// with Envoy's default tag extraction (cluster name, response code class, HCM prefix, listener address, ...) so that
// /stats/prometheus prints the same metric families and labels Envoy does. Hot paths hold Counter objects directly;
// the store is only walked by the admin endpoints and the flush timer.
import type { Re2 } from '../shared/regex.ts';

export class Counter {
  value = 0;
  /** Value at the last flush, for interval deltas. */
  latched = 0;
  used = false;
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  inc(n = 1): void {
    this.value += n;
    this.used = true;
  }
}

export type GaugeImportMode = 'accumulate' | 'never';

export class Gauge {
  value = 0;
  used = false;
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  set(v: number): void {
    this.value = v;
    this.used = true;
  }
  add(n = 1): void {
    this.value += n;
    this.used = true;
  }
  sub(n = 1): void {
    this.value -= n;
    this.used = true;
  }
}

/** Envoy's default histogram bucket bounds (stats_config.histogram_bucket_settings absent). */
export const DEFAULT_BUCKETS = [
  0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000,
];
export const SUPPORTED_QUANTILES = [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 100];

export type HistogramUnit = 'Unspecified' | 'Bytes' | 'Microseconds' | 'Milliseconds' | 'Percent';

export class Histogram {
  readonly name: string;
  readonly unit: HistogramUnit;
  used = false;
  /** Counts per bucket, the last slot being the overflow (> the largest bound). */
  readonly counts = new Array<number>(DEFAULT_BUCKETS.length + 1).fill(0);
  readonly interval = new Array<number>(DEFAULT_BUCKETS.length + 1).fill(0);
  /** Per-bucket minimum and maximum seen, so quantiles at the edges are exact for small samples. */
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  sum = 0;
  count = 0;
  intervalCount = 0;
  intervalMin = Number.POSITIVE_INFINITY;
  intervalMax = Number.NEGATIVE_INFINITY;
  constructor(name: string, unit: HistogramUnit) {
    this.name = name;
    this.unit = unit;
  }
  record(v: number): void {
    let i = 0;
    while (i < DEFAULT_BUCKETS.length && v > DEFAULT_BUCKETS[i]!) i++;
    this.counts[i]!++;
    this.interval[i]!++;
    this.sum += v;
    this.count++;
    this.intervalCount++;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    if (v < this.intervalMin) this.intervalMin = v;
    if (v > this.intervalMax) this.intervalMax = v;
    this.used = true;
  }
  /** Starts a new interval (called on each stats flush). */
  latch(): void {
    this.interval.fill(0);
    this.intervalCount = 0;
    this.intervalMin = Number.POSITIVE_INFINITY;
    this.intervalMax = Number.NEGATIVE_INFINITY;
  }
  quantiles(which: 'cumulative' | 'interval'): Array<number | null> {
    const counts = which === 'cumulative' ? this.counts : this.interval;
    const total = which === 'cumulative' ? this.count : this.intervalCount;
    const lo = which === 'cumulative' ? this.min : this.intervalMin;
    const hi = which === 'cumulative' ? this.max : this.intervalMax;
    return SUPPORTED_QUANTILES.map((q) => (total === 0 ? null : quantile(counts, total, q / 100, lo, hi)));
  }
}

/** Linear interpolation inside the bucket holding the quantile, clamped to the observed range. */
function quantile(counts: number[], total: number, q: number, lo: number, hi: number): number {
  if (q <= 0) return lo;
  if (q >= 1) return hi;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (c === 0) continue;
    if (seen + c >= rank) {
      const lower = Math.max(i === 0 ? 0 : DEFAULT_BUCKETS[i - 1]!, lo);
      const upper = Math.min(i < DEFAULT_BUCKETS.length ? DEFAULT_BUCKETS[i]! : hi, hi);
      const v = lower + ((rank - seen) / c) * (upper - lower);
      return Math.round(v * 1000) / 1000;
    }
    seen += c;
  }
  return hi;
}

// ---------------------------------------------------------------------------------------------------------------
// Tag extraction (Envoy's default tag specifiers, source/common/config/well_known_names.cc)

export interface Tag {
  name: string;
  value: string;
}

interface RegexExtractor {
  kind: 'regex';
  tag: string;
  re: RegExp;
  negative?: string;
}
interface TokenExtractor {
  kind: 'tokens';
  tag: string;
  tokens: string[];
}
type Extractor = RegexExtractor | TokenExtractor;

const ADDRESS = String.raw`(?:(?:\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[[a-fA-F_\d]+\])_\d+)`;
const TAG_VALUE = '[^.]+';
const ROUTE_CONFIG_NAME = String.raw`[\w\-.]+`;

// Regex extractors come first, then tokenized ones: Envoy's TagProducer keeps that order, which is the label order.
const EXTRACTORS: Extractor[] = [
  { kind: 'regex', tag: 'envoy.response_code', re: /_rq(_(\d{3}))$/ },
  { kind: 'regex', tag: 'envoy.response_code_class', re: /_rq_((\d))xx$/ },
  {
    kind: 'regex',
    tag: 'envoy.http_conn_manager_prefix',
    re: new RegExp(String.raw`^listener\..*?\.http\.((${TAG_VALUE})\.)`),
  },
  {
    kind: 'regex',
    tag: 'envoy.listener_address',
    re: new RegExp(String.raw`^listener\.((${ADDRESS}|${TAG_VALUE})\.)`),
    negative: 'admin',
  },
  {
    kind: 'regex',
    tag: 'envoy.rds_route_config',
    re: new RegExp(String.raw`^http\.${TAG_VALUE}\.rds\.((${ROUTE_CONFIG_NAME})\.)\w+?$`),
  },
  { kind: 'tokens', tag: 'envoy.http_user_agent', tokens: 'http.*.user_agent.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.virtual_cluster', tokens: 'vhost.*.vcluster.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.fault_downstream_cluster', tokens: 'http.*.fault.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.tcp_prefix', tokens: 'tcp.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.udp_prefix', tokens: 'udp.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.ratelimit_prefix', tokens: 'ratelimit.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.cluster_name', tokens: 'cluster.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.ext_authz_prefix', tokens: 'cluster.*.ext_authz.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.ext_authz_prefix', tokens: 'http.*.ext_authz.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.http_conn_manager_prefix', tokens: 'http.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.virtual_host', tokens: 'vhost.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.route', tokens: 'vhost.*.route.$.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.local_http_ratelimit_prefix', tokens: '$.http_local_rate_limit.**'.split('.') },
  { kind: 'tokens', tag: 'envoy.local_network_ratelimit_prefix', tokens: 'local_rate_limit.$.**'.split('.') },
];

/** Splits a stat name into Envoy's tag-extracted name and its tags, in Envoy's order. */
export function extractTags(name: string): { extracted: string; tags: Tag[] } {
  const tags: Tag[] = [];
  const seen = new Set<string>();
  const remove: Array<[number, number]> = [];
  let tokens: string[] | undefined;
  let offsets: number[] | undefined;
  for (const ex of EXTRACTORS) {
    if (seen.has(ex.tag)) continue;
    if (ex.kind === 'regex') {
      const m = ex.re.exec(name);
      if (!m || m[2] === undefined || m[2] === ex.negative) continue;
      const start = m.index + m[0].indexOf(m[1]!);
      remove.push([start, start + m[1]!.length]);
      tags.push({ name: ex.tag, value: m[2] });
      seen.add(ex.tag);
    } else {
      if (!tokens) {
        tokens = name.split('.');
        offsets = [];
        let off = 0;
        for (const t of tokens) {
          offsets.push(off);
          off += t.length + 1;
        }
      }
      const at = matchTokens(ex.tokens, tokens);
      if (at === undefined) continue;
      const start = offsets![at]!;
      remove.push([start, start + tokens[at]!.length + 1]);
      tags.push({ name: ex.tag, value: tokens[at]! });
      seen.add(ex.tag);
    }
  }
  if (remove.length === 0) return { extracted: name, tags };
  remove.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [s, e] of remove) {
    if (s > pos) out += name.slice(pos, s);
    pos = Math.max(pos, e);
  }
  out += name.slice(pos);
  return { extracted: out.replace(/\.$/, ''), tags };
}

/** Index of the token captured by `$`, or undefined. `*` is one token, `**` one or more. */
function matchTokens(pattern: string[], tokens: string[]): number | undefined {
  let captured: number | undefined;
  const go = (pi: number, ti: number): boolean => {
    if (pi === pattern.length) return ti === tokens.length;
    const p = pattern[pi]!;
    if (p === '**') {
      for (let k = ti + 1; k <= tokens.length; k++) if (go(pi + 1, k)) return true;
      return false;
    }
    if (ti >= tokens.length) return false;
    if (p === '$') {
      if (!go(pi + 1, ti + 1)) return false;
      captured = ti;
      return true;
    }
    if (p !== '*' && p !== tokens[ti]) return false;
    return go(pi + 1, ti + 1);
  };
  return go(0, 0) ? captured : undefined;
}

export function prometheusName(extracted: string): string {
  return 'envoy_' + extracted.replace(/[^a-zA-Z0-9_]/g, '_');
}

function labelName(tag: string): string {
  return tag.replace(/[^a-zA-Z0-9_]/g, '_');
}

function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

// ---------------------------------------------------------------------------------------------------------------

type Stat = Counter | Gauge | Histogram;

export class StatsStore {
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, Gauge>();
  private readonly histograms = new Map<string, Histogram>();
  private readonly tagCache = new Map<string, { extracted: string; tags: Tag[] }>();

  counter(name: string): Counter {
    let c = this.counters.get(name);
    if (!c) {
      c = new Counter(name);
      this.counters.set(name, c);
    }
    return c;
  }

  gauge(name: string): Gauge {
    let g = this.gauges.get(name);
    if (!g) {
      g = new Gauge(name);
      this.gauges.set(name, g);
    }
    return g;
  }

  histogram(name: string, unit: HistogramUnit = 'Milliseconds'): Histogram {
    let h = this.histograms.get(name);
    if (!h) {
      h = new Histogram(name, unit);
      this.histograms.set(name, h);
    }
    return h;
  }

  /**
   * A named set of stats under `prefix`, as Envoy declares them in one struct (the `ALL_*_STATS(COUNTER, GAUGE)`
   * macros): its counters and gauges by name.
   */
  group<C extends string, G extends string = never>(
    prefix: string,
    counters: readonly C[],
    gauges: readonly G[] = [],
  ): Record<C, Counter> & Record<G, Gauge> {
    const out = {} as Record<C, Counter> & Record<G, Gauge>;
    for (const c of counters) (out as Record<C, Counter>)[c] = this.counter(prefix + c);
    for (const g of gauges) (out as Record<G, Gauge>)[g] = this.gauge(prefix + g);
    return out;
  }

  /** Existing counter value (0 when absent): for tests and admin output. */
  value(name: string): number | undefined {
    return this.counters.get(name)?.value ?? this.gauges.get(name)?.value;
  }

  hasStat(name: string): boolean {
    return this.counters.has(name) || this.gauges.has(name) || this.histograms.has(name);
  }

  allCounters(): Counter[] {
    return [...this.counters.values()];
  }
  allGauges(): Gauge[] {
    return [...this.gauges.values()];
  }
  allHistograms(): Histogram[] {
    return [...this.histograms.values()];
  }

  /** Called on every stats flush: latches counters and starts new histogram intervals. */
  latch(): void {
    for (const c of this.counters.values()) c.latched = c.value;
    for (const h of this.histograms.values()) h.latch();
  }

  resetCounters(): void {
    for (const c of this.counters.values()) {
      c.value = 0;
      c.latched = 0;
    }
  }

  tagsOf(name: string): { extracted: string; tags: Tag[] } {
    let t = this.tagCache.get(name);
    if (!t) {
      t = extractTags(name);
      this.tagCache.set(name, t);
    }
    return t;
  }
}

export interface StatsQuery {
  filter?: Re2;
  usedOnly?: boolean;
  type?: 'All' | 'Counters' | 'Gauges' | 'Histograms' | 'TextReadouts';
}

function keep(stat: Stat, q: StatsQuery): boolean {
  if (q.usedOnly && !stat.used) return false;
  if (q.filter && !q.filter.test(stat.name)) return false;
  return true;
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function fmtQ(v: number | null): string {
  return v === null ? 'nan' : String(v);
}

/** GET /stats: `name: value` lines for counters and gauges sorted by name, then histograms with their quantiles. */
export function renderText(store: StatsStore, q: StatsQuery = {}): string {
  const type = q.type ?? 'All';
  const lines: string[] = [];
  const scalars: Array<Counter | Gauge> = [];
  if (type === 'All' || type === 'Counters') scalars.push(...store.allCounters().filter((c) => keep(c, q)));
  if (type === 'All' || type === 'Gauges') scalars.push(...store.allGauges().filter((g) => keep(g, q)));
  scalars.sort(byName);
  for (const s of scalars) lines.push(`${s.name}: ${s.value}`);
  if (type === 'All' || type === 'Histograms') {
    for (const h of store
      .allHistograms()
      .filter((x) => keep(x, q))
      .sort(byName)) {
      if (h.count === 0) {
        lines.push(`${h.name}: No recorded values`);
        continue;
      }
      const iv = h.quantiles('interval');
      const cu = h.quantiles('cumulative');
      const parts = SUPPORTED_QUANTILES.map((p, i) => `P${p}(${fmtQ(iv[i]!)},${fmtQ(cu[i]!)})`);
      lines.push(`${h.name}: ${parts.join(' ')}`);
    }
  }
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** GET /stats?format=json */
export function renderJson(store: StatsStore, q: StatsQuery = {}): unknown {
  const type = q.type ?? 'All';
  const stats: unknown[] = [];
  const scalars: Array<Counter | Gauge> = [];
  if (type === 'All' || type === 'Counters') scalars.push(...store.allCounters().filter((c) => keep(c, q)));
  if (type === 'All' || type === 'Gauges') scalars.push(...store.allGauges().filter((g) => keep(g, q)));
  scalars.sort(byName);
  for (const s of scalars) stats.push({ name: s.name, value: s.value });
  if (type === 'All' || type === 'Histograms') {
    const hs = store
      .allHistograms()
      .filter((x) => keep(x, q))
      .sort(byName);
    if (hs.length > 0) {
      stats.push({
        histograms: {
          supported_quantiles: SUPPORTED_QUANTILES,
          computed_quantiles: hs.map((h) => {
            const iv = h.quantiles('interval');
            const cu = h.quantiles('cumulative');
            return {
              name: h.name,
              values: SUPPORTED_QUANTILES.map((_, i) => ({ interval: iv[i], cumulative: cu[i] })),
            };
          }),
        },
      });
    }
  }
  return { stats };
}

/** GET /stats/prometheus: counters, then gauges, then histograms; one `# TYPE` line per metric family. */
export function renderPrometheus(store: StatsStore, q: StatsQuery = {}): string {
  const out: string[] = [];
  const section = <T extends Stat>(stats: T[], kind: string, lines: (s: T, name: string, labels: string[]) => void) => {
    const families = new Map<string, Array<{ stat: T; labels: string[] }>>();
    for (const s of stats) {
      if (!keep(s, q)) continue;
      const { extracted, tags } = store.tagsOf(s.name);
      const name = prometheusName(extracted);
      const labels = tags.map((t) => `${labelName(t.name)}="${labelValue(t.value)}"`);
      let fam = families.get(name);
      if (!fam) {
        fam = [];
        families.set(name, fam);
      }
      fam.push({ stat: s, labels });
    }
    for (const name of [...families.keys()].sort()) {
      out.push(`# TYPE ${name} ${kind}`);
      const fam = families.get(name)!.sort((a, b) => byName(a.stat, b.stat));
      for (const { stat, labels } of fam) lines(stat, name, labels);
    }
  };
  const braces = (labels: string[]) => (labels.length ? `{${labels.join(',')}}` : '');
  section(store.allCounters(), 'counter', (c, name, labels) => out.push(`${name}${braces(labels)} ${c.value}`));
  section(store.allGauges(), 'gauge', (g, name, labels) => out.push(`${name}${braces(labels)} ${g.value}`));
  section(store.allHistograms(), 'histogram', (h, name, labels) => {
    let cumulative = 0;
    for (let i = 0; i < DEFAULT_BUCKETS.length; i++) {
      cumulative += h.counts[i]!;
      out.push(`${name}_bucket${braces([...labels, `le="${DEFAULT_BUCKETS[i]}"`])} ${cumulative}`);
    }
    out.push(`${name}_bucket${braces([...labels, 'le="+Inf"'])} ${h.count}`);
    out.push(`${name}_sum${braces(labels)} ${formatSum(h.sum)}`);
    out.push(`${name}_count${braces(labels)} ${h.count}`);
  });
  return out.length ? out.join('\n') + '\n' : '';
}

function formatSum(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/\.?0+$/, '');
}
