// bench:lab's change → effect report (change-effect.ts): nearest-rank p50/p99 per kind (the rule the rest of
// bench:lab uses, bench/README.md), the write's own p50, and the target of issue 14 (p99 < 250 ms) judged per kind.
import { describe, expect, it } from 'vitest';
import { CHANGE_KINDS, changeEffectReport, TARGET_P99_MS, type Timings } from './change-effect.ts';

describe('changeEffectReport', () => {
  it('reports p50/p99 by nearest rank, the write p50, and met or MISSED per kind', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    const t = Object.fromEntries(
      CHANGE_KINDS.map((k) => [k, { ms: hundred, writeMs: hundred.map((x) => x / 10) }]),
    ) as unknown as Timings;
    t.selectorRelabel = { ms: [...hundred.slice(0, 98), 300, 400], writeMs: [1, 2, 3] };
    const { json, rows } = changeEffectReport(t);
    expect(json.routeEdit).toEqual({ changes: 100, p50: 50, p99: 99, writeP50: 5 });
    expect(json.selectorRelabel).toEqual({ changes: 100, p50: 50, p99: 300, writeP50: 2 });
    expect(json.targets).toEqual({ p99: TARGET_P99_MS });
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(/routeEdit, p50 \/ p99 of 100 .*\| 50 \/ 99 ms \| p99 < 250 ms \| met \|$/);
    expect(rows[3]).toMatch(/selectorRelabel.*\| 50 \/ 300 ms \| p99 < 250 ms \| MISSED \|$/);
  });
});
