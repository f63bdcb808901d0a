// The exposition checker against the Prometheus text format's rules
// (https://prometheus.io/docs/instrumenting/exposition_formats/, "Text format details"; histogram rules as OpenMetrics
// states them): one valid exposition passes, and each rule broken on its own is reported, naming the line and the rule.
import { describe, expect, it } from 'vitest';
import { checkExposition, parseExposition } from './exposition.ts';

const VALID = `# A plain comment is ignored.
# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"}    3 1395066363000

# Escaping in label values:
msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9
metric_without_timestamp_and_labels 12.47
something_weird{problem="division by zero"} +Inf -3982045
# HELP http_request_duration_seconds A histogram of the request duration.
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{le="0.05"} 24054
http_request_duration_seconds_bucket{le="0.1"} 33444
http_request_duration_seconds_bucket{le="0.2"} 100392
http_request_duration_seconds_bucket{le="+Inf"} 144320
http_request_duration_seconds_sum 53423
http_request_duration_seconds_count 144320
# TYPE rpc_duration_seconds summary
rpc_duration_seconds{quantile="0.01"} 3102
rpc_duration_seconds{quantile="0.5"} 4773
rpc_duration_seconds{quantile="0.99"} 76656
rpc_duration_seconds_sum 1.7560473e+07
rpc_duration_seconds_count 2693
\tindented_gauge\t{a="1"}\tNaN\t
`;

describe('a valid exposition (the format page example, plus blanks and tabs)', () => {
  it('has no problems and parses every sample with its family, labels and value', () => {
    const e = parseExposition(VALID);
    expect(e.problems).toEqual([]);
    expect(e.types.get('http_request_duration_seconds')).toBe('histogram');
    expect(e.help.get('http_requests_total')).toBe('The total number of HTTP requests.');
    const msdos = e.samples.find((s) => s.name === 'msdos_file_access_time_seconds')!;
    expect(msdos.labels).toEqual({ path: 'C:\\DIR\\FILE.TXT', error: 'Cannot find file:\n"FILE.TXT"' });
    expect(e.samples.find((s) => s.name === 'something_weird')!.value).toBe(Number.POSITIVE_INFINITY);
    expect(e.samples.find((s) => s.name === 'http_request_duration_seconds_sum')!.family).toBe(
      'http_request_duration_seconds',
    );
    expect(e.samples.find((s) => s.name === 'indented_gauge')!.value).toBeNaN();
    expect(e.samples).toHaveLength(17);
  });
});

describe('syntax', () => {
  it.each([
    ['an unterminated label value', '# TYPE a counter\na{x="1} 3\n', 'line 2: a: label x: unterminated value'],
    ['a value that is not a number', 'a one\n', 'line 1: a: expected "<value> [timestamp]", got "one"'],
    ['a missing value', 'a{x="1"}\n', 'line 1: a: expected "<value> [timestamp]", got ""'],
    ['a name run into its value', 'a1\n', 'line 1: a1: expected "<value> [timestamp]", got ""'],
    [
      'a timestamp that is not an integer',
      'a 1 1.5\n',
      'line 1: a: the timestamp must be an integer (milliseconds): 1.5',
    ],
    ['a third token', 'a 1 2 3\n', 'line 1: a: expected "<value> [timestamp]", got "1 2 3"'],
    ['no metric name', '{x="1"} 1\n', 'line 1: not a sample line (no metric name): "{x=\\"1\\"} 1"'],
    ['a bad label name', 'a{1x="1"} 1\n', 'line 1: a: invalid label name at "1x=\\"1\\"} 1"'],
    ['an unquoted label value', 'a{x=1} 1\n', 'line 1: a: label x: the value must be in double quotes'],
    [
      'a bad escape in a label value',
      'a{x="\\t"} 1\n',
      'line 1: a: label x: invalid escape \\t (only \\\\, \\" and \\n)',
    ],
    ['a missing comma', 'a{x="1" y="2"} 1\n', 'line 1: a: expected , or } after label x'],
    ['a label given twice', 'a{x="1",x="2"} 1\n', 'line 1: a: label x given twice'],
    ['a reserved label name', 'a{__name__="b"} 1\n', 'line 1: a: label names starting with __ are reserved: __name__'],
    ['no line feed at the end', 'a 1', 'the last line must end with a line feed'],
  ])('%s', (_what, text, problem) => {
    expect(checkExposition(text)).toEqual([problem]);
  });
});

describe('HELP and TYPE lines', () => {
  it.each([
    [
      'an unknown type',
      '# TYPE a countr\na 1\n',
      'line 1: a: TYPE must be one of counter, gauge, histogram, summary, untyped: "countr"',
    ],
    [
      'a TYPE line with an extra token',
      '# TYPE a counter x\n',
      'line 1: a: TYPE must be one of counter, gauge, histogram, summary, untyped: "counter x"',
    ],
    ['a second TYPE line', '# TYPE a counter\n# TYPE a counter\na 1\n', 'line 2: a: second TYPE line'],
    ['a TYPE line after the samples', 'a 1\n# TYPE a counter\n', "line 2: a: TYPE line after the family's samples"],
    ['a second HELP line', '# HELP a x\n# HELP a y\na 1\n', 'line 2: a: second HELP line'],
    ['a bad escape in HELP', '# HELP a x\\y\na 1\n', 'line 1: a: HELP text may only escape \\\\ and \\n'],
    ['a TYPE line without a valid name', '# TYPE 9a counter\n', 'line 1: # TYPE needs a valid metric name: "9a"'],
  ])('%s', (_what, text, problem) => {
    expect(checkExposition(text)).toEqual([problem]);
  });

  it('a family split into two groups (promtool: a second TYPE line for it)', () => {
    expect(checkExposition('# TYPE a counter\na 1\n# TYPE a counter\na{b="c"} 2\n')).toEqual([
      'line 3: a: second TYPE line',
      "line 3: a: TYPE line after the family's samples",
    ]);
    expect(checkExposition('a{x="1"} 1\nb 1\na{x="2"} 1\n')).toEqual([
      'line 3: a: lines of one metric family must form a single group',
    ]);
  });
});

describe('series', () => {
  it('a series given twice, whatever the label order', () => {
    expect(checkExposition('a{x="1",y="2"} 1\na{y="2",x="1"} 2\n')).toEqual([
      'line 2: duplicate series a{x="1",y="2"} (first on line 1)',
    ]);
    expect(checkExposition('a 1\na 2\n')).toEqual(['line 2: duplicate series a (first on line 1)']);
  });
});

const histogram = (buckets: string, tail = 'h_sum 3\nh_count 2\n') => `# TYPE h histogram\n${buckets}${tail}`;

describe('histograms', () => {
  it.each([
    ['no +Inf bucket', histogram('h_bucket{le="1"} 2\n'), ['h: a histogram series needs a last bucket with le="+Inf"']],
    [
      'buckets out of le order',
      histogram('h_bucket{le="2"} 1\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\n'),
      ['line 3: h: buckets must be in increasing order of le (1)'],
    ],
    [
      'the +Inf bucket before another',
      histogram('h_bucket{le="+Inf"} 2\nh_bucket{le="1"} 2\n'),
      [
        'line 3: h: buckets must be in increasing order of le (1)',
        'h: a histogram series needs a last bucket with le="+Inf"',
      ],
    ],
    [
      'counts that are not cumulative',
      histogram('h_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\n'),
      ['line 3: h: bucket counts must be cumulative (le="2")'],
    ],
    [
      '_count different from the +Inf bucket',
      histogram('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 3\n'),
      ['line 5: h: h_count 2 differs from the +Inf bucket 3'],
    ],
    ['no _sum', histogram('h_bucket{le="+Inf"} 2\n', 'h_count 2\n'), ['h: no h_sum']],
    ['no _count', histogram('h_bucket{le="+Inf"} 2\n', 'h_sum 3\n'), ['h: no h_count']],
    [
      'a bucket without le',
      histogram('h_bucket 2\nh_bucket{le="+Inf"} 2\n'),
      ['line 2: h_bucket: a bucket needs an le label with a number: undefined'],
    ],
    [
      'a sample named like the family',
      histogram('h_bucket{le="+Inf"} 2\nh 2\n'),
      ["line 3: h: a histogram's samples are h_bucket, h_sum and h_count"],
    ],
    [
      'the same le twice',
      histogram('h_bucket{le="1"} 1\nh_bucket{le="1.0"} 1\nh_bucket{le="+Inf"} 2\n'),
      ['line 3: h: buckets must be in increasing order of le (1.0)'],
    ],
  ])('%s', (_what, text, problems) => {
    expect(checkExposition(text)).toEqual(problems);
  });

  it('checks each labelled series on its own', () => {
    const text = histogram(
      'h_bucket{c="a",le="1"} 1\nh_bucket{c="a",le="+Inf"} 1\nh_bucket{c="b",le="1"} 1\n',
      'h_sum{c="a"} 1\nh_count{c="a"} 1\nh_sum{c="b"} 1\nh_count{c="b"} 1\n',
    );
    expect(checkExposition(text)).toEqual(['h{c="b"}: a histogram series needs a last bucket with le="+Inf"']);
  });
});

describe('summaries', () => {
  it('quantiles in increasing order, each with a quantile label', () => {
    expect(checkExposition('# TYPE s summary\ns{quantile="0.9"} 1\ns{quantile="0.5"} 1\ns_sum 1\ns_count 1\n')).toEqual(
      ['line 3: s: quantiles must be in increasing order (0.5)'],
    );
    expect(checkExposition('# TYPE s summary\ns 1\ns_sum 1\ns_count 1\n')).toEqual([
      'line 2: s: a summary quantile needs a quantile label with a number',
    ]);
  });
});
