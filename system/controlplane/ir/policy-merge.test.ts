// The merge of one field's spec values (policy-merge.ts): RFC 7386 JSON Merge Patch for JSONMerge (the RFC's own
// examples, section 3 / appendix A), Kubernetes strategic merge patch for StrategicMerge on the lists the table names.
import { describe, expect, it } from 'vitest';
import { readFromSpec } from './policies.ts';
import { mergeable, mergeValue } from './policy-merge.ts';

describe('mergeValue', () => {
  it('JSONMerge is RFC 7386: objects merge, lists and scalars replace, null deletes (its appendix A cases)', () => {
    const cases: [unknown, unknown, unknown][] = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [
        ['a', 'b'],
        ['c', 'd'],
        ['c', 'd'],
      ],
      [{ a: 'b' }, ['c'], ['c']],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [base, patch, want] of cases) expect(mergeValue(base, patch, ['timeouts'], 'JSONMerge')).toEqual(want);
  });

  it('StrategicMerge merges the listed lists (keyed by name, or as sets) and replaces the others', () => {
    const base = {
      request: {
        set: [
          { name: 'a', value: '1' },
          { name: 'b', value: '1' },
        ],
        remove: ['x'],
      },
    };
    const patch = {
      request: {
        set: [
          { name: 'c', value: '2' },
          { name: 'B', value: '2' },
        ],
        remove: ['y', 'x'],
      },
    };
    expect(mergeValue(base, patch, ['headerModifiers'], 'StrategicMerge')).toEqual({
      request: {
        set: [
          { name: 'a', value: '1' },
          { name: 'B', value: '2' },
          { name: 'c', value: '2' },
        ],
        remove: ['x', 'y'],
      },
    });
    expect(mergeValue(base, patch, ['headerModifiers'], 'JSONMerge')).toEqual(patch);
    // A list no table entry names replaces under StrategicMerge too.
    expect(mergeValue({ l: [1, 2] }, { l: [3] }, ['faultInjection'], 'StrategicMerge')).toEqual({ l: [3] });
  });

  it('StrategicMerge merges rbac policies by name and transformation templates like headerModifiers; jwt never merges', () => {
    const base = {
      action: 'Deny',
      policies: [{ name: 'net', principals: [{ remoteIp: '10.0.0.0/8' }] }, { name: 'ua' }],
    };
    const patch = { policies: [{ name: 'net', principals: [{ remoteIp: '192.0.2.0/24' }] }, { name: 'new' }] };
    expect(mergeValue(base, patch, ['rbac'], 'StrategicMerge')).toEqual({
      action: 'Deny',
      policies: [{ name: 'net', principals: [{ remoteIp: '192.0.2.0/24' }] }, { name: 'ua' }, { name: 'new' }],
    });
    expect(
      mergeValue(
        { response: { add: [{ name: 'x-a', value: '1' }], remove: ['server'] } },
        { response: { add: [{ name: 'x-b', value: '%REQ(:PATH)%' }], remove: ['x-powered-by'] } },
        ['transformation'],
        'StrategicMerge',
      ),
    ).toEqual({
      response: {
        add: [
          { name: 'x-a', value: '1' },
          { name: 'x-b', value: '%REQ(:PATH)%' },
        ],
        remove: ['server', 'x-powered-by'],
      },
    });
    expect(
      mergeValue(
        { contentTypes: ['text/html'] },
        { contentTypes: ['application/json'] },
        ['compression'],
        'StrategicMerge',
      ),
    ).toEqual({
      contentTypes: ['text/html', 'application/json'],
    });
    expect(mergeable('rbac')).toBe(true);
    // jwt is read with the world (its remote JWKS Service): it never merges (attach-policies.ts mergeChain).
    expect(readFromSpec('jwt')).toBe(false);
  });

  it('leaves its inputs unchanged', () => {
    const base = { a: { b: 1 }, l: ['x'] };
    const patch = { a: { c: 2 }, l: ['y'] };
    mergeValue(base, patch, ['retry'], 'StrategicMerge');
    expect(base).toEqual({ a: { b: 1 }, l: ['x'] });
    expect(patch).toEqual({ a: { c: 2 }, l: ['y'] });
  });
});
