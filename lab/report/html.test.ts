// The HTML run summary (html.ts): every test with status, timing, failure and artifacts; each file's whole time and
// the lab and worker that ran it; and its duration format.
import { describe, expect, it } from 'vitest';
import { formatDuration, ranOn, renderHtmlSummary } from './html.ts';

describe('HTML summary', () => {
  it('lists every test with status, timing, escaped failure and artifact link', () => {
    const html = renderHtmlSummary(
      {
        numPassedTests: 1,
        numFailedTests: 1,
        numTotalTests: 2,
        startTime: 1000,
        success: false,
        testResults: [
          {
            name: '/repo/scenarios/05-policy.test.ts',
            status: 'failed',
            startTime: 1000,
            endTime: 4500,
            assertionResults: [
              {
                ancestorTitles: ['policy'],
                fullName: 'policy ok',
                title: 'ok',
                status: 'passed',
                duration: 1200,
                failureMessages: [],
              },
              {
                ancestorTitles: ['policy'],
                fullName: 'policy bad',
                title: 'bad',
                status: 'failed',
                duration: 2300,
                failureMessages: ['\u001b[31mexpected <200> got 503\u001b[39m'],
              },
            ],
          },
        ],
      },
      { runId: 'r1', root: '/repo', artifacts: { 'policy bad': 'artifacts/policy-bad' } },
    );
    expect(html).toContain('scenarios/05-policy.test.ts');
    expect(html).toContain('expected &lt;200&gt; got 503');
    expect(html).not.toContain('\u001b');
    expect(html).toContain('href="artifacts/policy-bad/"');
    expect(html).toContain('1.2 s');
    expect(html).toContain('3.5 s');
    expect(html).not.toMatch(/<link|<script src/);
  });
});

describe('HTML summary with per-file timings', () => {
  it("shows each file's whole time and the lab and worker that ran it", () => {
    const file = (name: string, startTime: number, endTime: number) => ({
      name,
      status: 'passed',
      startTime,
      endTime,
      assertionResults: [],
    });
    const html = renderHtmlSummary(
      {
        numPassedTests: 0,
        numFailedTests: 0,
        numTotalTests: 0,
        startTime: 1000,
        success: true,
        testResults: [file('/repo/scenarios/12-bundle.test.ts', 1000, 1000), file('/repo/lab/x.test.ts', 1000, 1500)],
      },
      {
        runId: 'r2',
        root: '/repo',
        files: [
          {
            file: '/repo/scenarios/12-bundle.test.ts',
            project: 'scenarios',
            state: 'passed',
            ms: 4200,
            worker: 2,
            lab: 'scn-1-2',
          },
        ],
      },
    );
    // The bundle's work is all in beforeAll: its tests' span is 0 ms, its whole time 4.2 s.
    expect(html).toContain('lab scn-1-2 · worker 2');
    expect(html).toContain('4.2 s');
    // A file without a timing keeps its tests' span.
    expect(html).toContain('500 ms');
  });

  it('names the worker alone for a file that ran on no lab', () => {
    expect(ranOn({ file: 'f', project: 'unit', state: 'passed', ms: 1, worker: 3 })).toBe('worker 3');
    expect(ranOn(undefined)).toBe('');
  });
});

describe('formatDuration', () => {
  it('rounds to whole seconds before splitting minutes and seconds (never "1 min 60 s")', () => {
    expect(formatDuration(950)).toBe('950 ms');
    expect(formatDuration(59_940)).toBe('59.9 s');
    expect(formatDuration(119_900)).toBe('2 min 0 s');
    expect(formatDuration(125_400)).toBe('2 min 5 s');
  });
});
