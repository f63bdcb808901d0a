// A self-contained HTML summary of a test run (no external assets), built from vitest's JSON report and the per-file
// timings of files-reporter.ts: each file's whole time (its JSON span covers only its tests), and for a scenario the
// lab it ran on and the worker that ran it (scenarios run on several labs side by side).
import { relative } from 'node:path';
import type { FileTiming } from './files-reporter.ts';

export interface VitestAssertion {
  ancestorTitles: string[];
  fullName: string;
  title: string;
  status: string;
  duration?: number | null;
  failureMessages: string[];
}

export interface VitestFile {
  name: string;
  status: string;
  message?: string;
  startTime: number;
  endTime: number;
  assertionResults: VitestAssertion[];
}

export interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests?: number;
  numTotalTests: number;
  startTime: number;
  success: boolean;
  testResults: VitestFile[];
}

export interface SummaryOptions {
  runId: string;
  root: string;
  /** Artifact folder (relative to the report) per failed test's full name. */
  artifacts?: Record<string, string>;
  /** Per-file timings (files-reporter.ts), matched to the report's files by path. */
  files?: FileTiming[];
}

/** `lab scn-1 · worker 2`, `worker 3`, or '' when the file's worker is not known. */
export function ranOn(t: FileTiming | undefined): string {
  if (!t?.worker) return t?.lab ? `lab ${t.lab}` : '';
  return t.lab ? `lab ${t.lab} · worker ${t.worker}` : `worker ${t.worker}`;
}

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const esc = escapeHtml;

// ANSI colour codes from assertion messages would show as garbage in a browser.
const stripAnsi = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000); // rounded first: 119.9 s is 2 min 0 s, not 1 min 60 s
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function renderHtmlSummary(report: VitestJson, opts: SummaryOptions): string {
  const files = [...report.testResults].sort((a, b) => a.name.localeCompare(b.name));
  const wall = Math.max(0, ...files.map((f) => f.endTime)) - report.startTime;
  const timings = new Map((opts.files ?? []).map((t) => [t.file, t]));
  const rows = files
    .map((f) => {
      const name = relative(opts.root, f.name);
      const timing = timings.get(f.name);
      const where = ranOn(timing);
      const tests = f.assertionResults
        .map((t) => {
          const art = opts.artifacts?.[t.fullName];
          const fail = t.failureMessages.length
            ? `<pre class="fail">${esc(stripAnsi(t.failureMessages.join('\n')).slice(0, 4000))}</pre>`
            : '';
          return `<tr class="${esc(t.status)}"><td class="st">${esc(t.status)}</td><td>${esc(
            [...t.ancestorTitles, t.title].join(' › '),
          )}${fail}${art ? `<div><a href="${esc(art)}/">artifacts</a></div>` : ''}</td><td class="num">${
            t.duration != null ? formatDuration(t.duration) : '-'
          }</td></tr>`;
        })
        .join('\n');
      const fileMsg = f.message ? `<pre class="fail">${esc(stripAnsi(f.message).slice(0, 4000))}</pre>` : '';
      return `<tbody><tr class="file ${esc(f.status)}"><th colspan="2">${esc(name)}${
        where ? ` <span class="ran">${esc(where)}</span>` : ''
      }${fileMsg}</th><th class="num">${formatDuration(timing?.ms ?? f.endTime - f.startTime)}</th></tr>\n${tests}</tbody>`;
    })
    .join('\n');
  const failed = report.numFailedTests;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gwlab run ${esc(opts.runId)}</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
.num{text-align:right;white-space:nowrap}
.st{width:5em}
tr.file th{background:#f3f3f3}
tr.passed .st{color:#17803d}
tr.failed .st,tr.file.failed th{color:#b42318}
tr.skipped .st,tr.pending .st{color:#777}
pre.fail{white-space:pre-wrap;background:#fff4f2;padding:6px;margin:4px 0;font-size:12px}
.summary span{margin-right:1.5em}
.ran{font-weight:normal;color:#555;margin-left:1em}
</style></head><body>
<h1>gwlab run ${esc(opts.runId)}</h1>
<p class="summary"><span><b>${report.numPassedTests}</b> passed</span><span><b>${failed}</b> failed</span><span>${
    report.numPendingTests ?? 0
  } skipped</span><span>wall time ${formatDuration(wall)}</span><span>started ${esc(new Date(report.startTime).toISOString())}</span></p>
<table><thead><tr><th>status</th><th>test</th><th class="num">time</th></tr></thead>
${rows}
</table></body></html>
`;
}
