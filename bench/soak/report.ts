// bench:soak's results, checks and reports (pure: bench/soak.ts measures, this judges and renders). The acceptance
// checks are the soak's purpose (issue 17): no failed request, every change reconciled (status written and effect
// seen), and each component's RSS growing less than 10 % from minute 10 to the end; also no API request refused (401)
// and no container restart. The HTML is self-contained: SVG plots (lab/report/chart.ts) of RSS and open files per
// component over time and of the change → status and change → effect latencies, then the changes and the failed
// requests.
import { lineChart } from '../../lab/report/chart.ts';
import { escapeHtml as esc, formatDuration } from '../../lab/report/html.ts';

export const COMPONENTS = ['lab process', 'control plane', 'proxy', 'sample app'] as const;
export type Component = (typeof COMPONENTS)[number];

export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  /** Per component present: resident set (kB) and open file descriptors, summed over its processes. */
  procs: Partial<Record<Component, { rssKb: number; fds: number; pids: number[] }>>;
}

export interface FailedRequest {
  t: number;
  host: string;
  /** HTTP status, or 0 when no response came (the error says why). */
  status: number;
  error?: string;
}

export interface Change {
  i: number;
  kind: 'route' | 'policy';
  /** What changed: a new HTTPRoute, or a TrafficPolicy's response header value. */
  what: string;
  /** Seconds since the soak started. */
  t: number;
  /** Change → status written (Accepted for a route, Attached for a policy, at the new generation). */
  statusMs?: number;
  /** Change → first response showing it. */
  effectMs?: number;
  error?: string;
}

export interface SoakResult {
  date: string;
  minutes: number;
  options: { rps: number; changeEveryMinutes: number; sampleEverySeconds: number; saTokenMaxExpiration?: number };
  machine: { cpus: number; loadavgBefore: number[]; loadavgAfter: number[] };
  /** Seconds actually soaked (less than minutes × 60 when interrupted). */
  elapsed: number;
  interrupted: boolean;
  requests: { total: number; failed: FailedRequest[]; latencyMs: { p50: number; p99: number; max: number } };
  changes: Change[];
  samples: Sample[];
  /** Distinct control plane tokens seen minus one (the kubelet's renewals during the soak). */
  tokenRenewals: number;
  /** Requests the API server refused with 401 during the soak (request log). */
  refused401: number;
  /** Container restarts of the lab's pods at the end. */
  restarts: Record<string, number>;
}

export interface Check {
  name: string;
  /** undefined: not evaluated (e.g. a run too short for the RSS window). */
  ok: boolean | undefined;
  detail: string;
}

const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
/** Minute 10, the RSS baseline (s). */
const BASE = [600, 660];
/** Shortest run judged for RSS growth (s): a 12-minute run, with some slack for the timers. */
const MIN_RSS_RUN = 690;

/** Mean RSS (kB) of a component in minute 10 (600–660 s) and in the last minute of the run. */
export function rssWindows(r: SoakResult, c: Component): { base?: number; end?: number } {
  const rss = (lo: number, hi: number) => {
    const v = r.samples.filter((s) => s.t >= lo && s.t < hi && s.procs[c]).map((s) => s.procs[c]!.rssKb);
    return v.length ? mean(v) : undefined;
  };
  if (r.elapsed < MIN_RSS_RUN) return {};
  return { base: rss(BASE[0], BASE[1]), end: rss(r.elapsed - 60, Number.POSITIVE_INFINITY) };
}

export function checks(r: SoakResult): Check[] {
  const out: Check[] = [];
  const f = r.requests.failed;
  out.push({
    name: 'no failed request',
    ok: f.length === 0,
    detail: `${f.length} of ${r.requests.total} failed${f.length ? ` (first at ${Math.round(f[0].t)} s: ${f[0].status || f[0].error})` : ''}`,
  });
  const bad = r.changes.filter((c) => c.statusMs === undefined || c.effectMs === undefined);
  out.push({
    name: 'every change reconciled',
    ok: r.changes.length > 0 && bad.length === 0,
    detail: r.changes.length
      ? `${r.changes.length - bad.length} of ${r.changes.length}${bad.length ? `; not: ${bad.map((c) => `#${c.i} ${c.what} (${c.error ?? 'no status/effect'})`).join('; ')}` : ''}`
      : 'no change was made (run shorter than the change interval)',
  });
  for (const c of COMPONENTS) {
    const { base, end } = rssWindows(r, c);
    if (base === undefined || end === undefined) {
      out.push({
        name: `${c}: RSS growth < 10 % from minute 10 to the end`,
        ok: undefined,
        detail: r.elapsed < MIN_RSS_RUN ? 'not evaluated: the run is shorter than 12 minutes' : 'no samples',
      });
      continue;
    }
    const growth = end / base - 1;
    out.push({
      name: `${c}: RSS growth < 10 % from minute 10 to the end`,
      ok: growth < 0.1,
      detail: `${(base / 1024).toFixed(1)} MB → ${(end / 1024).toFixed(1)} MB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %)`,
    });
  }
  out.push({ name: 'no API request refused (401)', ok: r.refused401 === 0, detail: `${r.refused401} refused` });
  const restarted = Object.entries(r.restarts).filter(([, n]) => n > 0);
  out.push({
    name: 'no container restart',
    ok: restarted.length === 0,
    detail: restarted.length ? restarted.map(([p, n]) => `${p}: ${n}`).join(', ') : 'none',
  });
  return out;
}

export const passed = (cs: Check[]) => cs.every((c) => c.ok !== false);

const mark = (ok: boolean | undefined) => (ok === undefined ? 'n/a ' : ok ? 'ok  ' : 'FAIL');

export function summaryText(r: SoakResult, cs: Check[]): string {
  const lat = (k: 'statusMs' | 'effectMs') => {
    const v = r.changes.map((c) => c[k]).filter((x): x is number => x !== undefined);
    return v.length ? `median ${Math.round(median(v))} ms, max ${Math.round(Math.max(...v))} ms` : '-';
  };
  return [
    `bench:soak ${r.date}: ${formatDuration(r.elapsed * 1000)} of ${r.minutes} min${r.interrupted ? ' (INTERRUPTED)' : ''}, ${r.options.rps} req/s, a change every ${r.options.changeEveryMinutes} min${r.options.saTokenMaxExpiration ? `, tokens ≤ ${r.options.saTokenMaxExpiration} s (${r.tokenRenewals} renewals seen)` : ''}`,
    `requests: ${r.requests.total}, failed ${r.requests.failed.length}, p50 ${r.requests.latencyMs.p50} ms, p99 ${r.requests.latencyMs.p99} ms`,
    `changes: ${r.changes.length}; change → status ${lat('statusMs')}; change → effect ${lat('effectMs')}`,
    ...cs.map((c) => `  ${mark(c.ok)} ${c.name}: ${c.detail}`),
    passed(cs) ? 'PASS' : 'FAIL',
  ].join('\n');
}

function median(a: number[]): number {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const minutes = (t: number) => `${Math.round((t / 60) * 10) / 10}`;

export function reportHtml(r: SoakResult, cs: Check[]): string {
  const series = (pick: (p: { rssKb: number; fds: number }) => number) =>
    COMPONENTS.map((c) => ({
      name: c,
      points: r.samples.filter((s) => s.procs[c]).map((s) => [s.t / 60, pick(s.procs[c]!)] as [number, number]),
    }));
  const time = { xLabel: 'minutes since the soak started' };
  const charts = [
    lineChart(
      series((p) => p.rssKb / 1024),
      { title: 'Resident memory (RSS)', yLabel: 'MB', ...time },
    ),
    lineChart(
      series((p) => p.fds),
      { title: 'Open file descriptors', yLabel: 'count', ...time },
    ),
    lineChart(
      [
        {
          name: 'change → status',
          points: r.changes.filter((c) => c.statusMs !== undefined).map((c) => [c.t, c.statusMs!]),
        },
        {
          name: 'change → effect',
          points: r.changes.filter((c) => c.effectMs !== undefined).map((c) => [c.t, c.effectMs!]),
        },
      ],
      { title: 'Reconcile latency per change', yLabel: 'ms', markersOnly: true, ...time },
    ),
  ];
  const row = (cells: string[]) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  const changes = r.changes
    .map((c) =>
      row([
        String(c.i),
        minutes(c.t),
        esc(c.kind),
        esc(c.what),
        c.statusMs === undefined ? '-' : `${Math.round(c.statusMs)}`,
        c.effectMs === undefined ? '-' : `${Math.round(c.effectMs)}`,
        esc(c.error ?? ''),
      ]),
    )
    .join('\n');
  const failed = r.requests.failed
    .slice(0, 500)
    .map((f) => row([`${f.t.toFixed(1)}`, esc(f.host), String(f.status || '-'), esc(f.error ?? '')]))
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bench:soak ${esc(r.date)}</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}
.ok{color:#17803d}.fail{color:#b42318}.na{color:#777}pre{background:#f6f6f6;padding:8px}
</style></head><body>
<h1>bench:soak</h1>
<pre>${esc(summaryText(r, cs))}</pre>
<table><thead><tr><th>check</th><th></th><th>detail</th></tr></thead>
${cs.map((c) => `<tr><td>${esc(c.name)}</td><td class="${c.ok === undefined ? 'na' : c.ok ? 'ok' : 'fail'}">${mark(c.ok).trim()}</td><td>${esc(c.detail)}</td></tr>`).join('\n')}
</table>
${charts.map((c) => `<div>${c}</div>`).join('\n')}
<h2>Changes</h2>
<table><thead><tr><th>#</th><th>min</th><th>kind</th><th>change</th><th>→ status (ms)</th><th>→ effect (ms)</th><th>error</th></tr></thead>
${changes}
</table>
<h2>Failed requests (${r.requests.failed.length})</h2>
<table><thead><tr><th>s</th><th>host</th><th>status</th><th>error</th></tr></thead>
${failed}
</table>
<p>Machine: ${r.machine.cpus} cores, load average ${r.machine.loadavgBefore.map((l) => l.toFixed(2)).join(' ')} before, ${r.machine.loadavgAfter.map((l) => l.toFixed(2)).join(' ')} after.</p>
</body></html>
`;
}
