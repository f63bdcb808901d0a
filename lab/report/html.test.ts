// The HTML run summary (html.ts): every test with status, timing, failure and artifacts; and its duration format.
import { describe, expect, it } from 'vitest';
import { formatDuration, renderHtmlSummary } from './html.ts';

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

describe('formatDuration', () => {
  it('rounds to whole seconds before splitting minutes and seconds (never "1 min 60 s")', () => {
    expect(formatDuration(950)).toBe('950 ms');
    expect(formatDuration(59_940)).toBe('59.9 s');
    expect(formatDuration(119_900)).toBe('2 min 0 s');
    expect(formatDuration(125_400)).toBe('2 min 5 s');
  });
});
