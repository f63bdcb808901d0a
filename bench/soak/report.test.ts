// bench:soak's judgement and report (soak/report.ts) on made-up results: the acceptance checks (failed requests,
// reconciled changes, RSS growth from minute 10 to the end per component, 401s, restarts), the summary, and the
// self-contained HTML with its SVG plots (lab/report/chart.ts).
import { describe, expect, it } from 'vitest';
import { lineChart, niceTicks } from '../../lab/report/chart.ts';
import { checks, passed, reportHtml, rssWindows, type Sample, type SoakResult, summaryText } from './report.ts';

/** Samples every 30 s for `minutes`, each component's RSS from `rss(t)` (MB). */
function samples(minutes: number, rss: (t: number) => number): Sample[] {
  const out: Sample[] = [];
  for (let t = 0; t <= minutes * 60; t += 30) {
    const p = { rssKb: rss(t) * 1024, fds: 40, pids: [1] };
    out.push({ t, procs: { 'lab process': p, 'control plane': p, proxy: p, 'sample app': p } });
  }
  return out;
}

function result(over: Partial<SoakResult> = {}): SoakResult {
  return {
    date: '2025-01-01T00:00:00.000Z',
    minutes: 20,
    options: { rps: 5, changeEveryMinutes: 3, sampleEverySeconds: 30 },
    machine: { cpus: 2, loadavgBefore: [1, 1, 1], loadavgAfter: [1, 1, 1] },
    elapsed: 1200,
    interrupted: false,
    requests: { total: 6000, failed: [], latencyMs: { p50: 3, p99: 20, max: 40 } },
    changes: [
      { i: 1, kind: 'route', what: 'HTTPRoute r1', t: 180, statusMs: 120, effectMs: 300 },
      { i: 2, kind: 'policy', what: 'TrafficPolicy v2', t: 360, statusMs: 90, effectMs: 250 },
    ],
    samples: samples(20, (t) => (t < 300 ? 50 + t / 10 : 80)),
    tokenRenewals: 0,
    refused401: 0,
    restarts: { 'soak/gw-1': 0 },
    ...over,
  };
}

describe('soak checks', () => {
  it('pass a clean run: RSS flat after warm-up, every change reconciled, no failure', () => {
    const r = result();
    expect(rssWindows(r, 'proxy')).toEqual({ base: 80 * 1024, end: 80 * 1024 });
    const cs = checks(r);
    expect(cs.map((c) => c.ok)).toEqual(cs.map(() => true));
    expect(passed(cs)).toBe(true);
    expect(summaryText(r, cs)).toMatch(/PASS$/);
  });

  it('fail on a failed request, an unreconciled change, 10 % RSS growth, a 401 or a restart', () => {
    const r = result({
      requests: {
        total: 10,
        failed: [{ t: 42.5, host: 'base.soak.example', status: 503, error: 'no healthy upstream' }],
        latencyMs: { p50: 1, p99: 1, max: 1 },
      },
      changes: [{ i: 1, kind: 'route', what: 'HTTPRoute r1', t: 180, statusMs: 100, error: 'timed out' }],
      // From minute 10 on, 1 MB more a minute: 80.25 MB in minute 10, 89.5 MB in the last minute (+11.5 %).
      samples: samples(20, (t) => (t < 600 ? 80 : 80 + (t - 600) / 60)),
      refused401: 3,
      restarts: { 'soak/gw-1': 1 },
    });
    const cs = checks(r);
    const by = Object.fromEntries(cs.map((c) => [c.name, c]));
    expect(by['no failed request']).toMatchObject({ ok: false, detail: '1 of 10 failed (first at 43 s: 503)' });
    expect(by['every change reconciled'].ok).toBe(false);
    expect(by['every change reconciled'].detail).toContain('#1 HTTPRoute r1 (timed out)');
    expect(by['proxy: RSS growth < 10 % from minute 10 to the end']).toMatchObject({ ok: false });
    expect(by['proxy: RSS growth < 10 % from minute 10 to the end'].detail).toBe('80.3 MB → 89.5 MB (+11.5 %)');
    expect(by['no API request refused (401)'].ok).toBe(false);
    expect(by['no container restart']).toMatchObject({ ok: false, detail: 'soak/gw-1: 1' });
    expect(passed(cs)).toBe(false);
    expect(summaryText(r, cs)).toContain('FAIL no failed request');
  });

  it('judges RSS growth on a 12-minute run (minute 10 against minute 11 to 12)', () => {
    // Timers end a 12-minute run a hair early or late.
    const r = result({ elapsed: 719.996, minutes: 12, samples: samples(12, (t) => (t < 660 ? 80 : 84)) });
    expect(rssWindows(r, 'proxy')).toEqual({ base: 80 * 1024, end: 84 * 1024 });
    expect(checks(r).find((c) => c.name.startsWith('proxy: RSS'))).toMatchObject({
      ok: true,
      detail: '80.0 MB → 84.0 MB (+5.0 %)',
    });
  });

  it('does not judge RSS growth on a run shorter than 12 minutes, nor changes that were never made', () => {
    const r = result({ elapsed: 300, minutes: 5, samples: samples(5, () => 50), changes: [] });
    const cs = checks(r);
    expect(cs.filter((c) => c.name.includes('RSS')).map((c) => c.ok)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(cs.find((c) => c.name === 'every change reconciled')?.ok).toBe(false);
  });
});

describe('soak report', () => {
  it('is one HTML file with the checks, SVG plots of RSS, descriptors and latencies, and the failures', () => {
    const r = result({
      requests: {
        total: 10,
        failed: [{ t: 1, host: '<b>x</b>', status: 0, error: 'ECONNRESET' }],
        latencyMs: { p50: 1, p99: 1, max: 1 },
      },
    });
    const html = reportHtml(r, checks(r));
    expect(html).not.toMatch(/<script|<link|src="http/);
    expect(html.match(/<svg /g)?.length).toBe(3);
    for (const t of ['Resident memory (RSS)', 'Open file descriptors', 'Reconcile latency per change']) {
      expect(html).toContain(t);
    }
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(html).toContain('ECONNRESET');
  });

  it('charts: round ticks covering the data, one path per series, markers with tooltips', () => {
    expect(niceTicks(0, 97)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(3.2, 3.9)).toEqual([3.2, 3.4, 3.6, 3.8, 4]);
    const svg = lineChart(
      [
        {
          name: 'a',
          points: [
            [0, 1],
            [60, 2],
          ],
        },
        { name: 'b', points: [[0, 3]] },
      ],
      { title: 'T', xLabel: 'x', yLabel: 'y' },
    );
    expect(svg.match(/<path /g)?.length).toBe(2);
    expect(svg).toContain('<title>a: 60, 2</title>');
    expect(lineChart([], { title: 'empty', xLabel: 'x', yLabel: 'y' })).toContain('no data');
  });
});
