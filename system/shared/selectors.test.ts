// The one label/field selector module, against the cases of k8s.io/apimachinery: pkg/labels/selector_test.go
// (TestSelectorParse, TestSelectorMatches, TestRequirementSelectorMatching, String() order), pkg/apis/meta/v1/
// helpers_test.go (TestLabelSelectorAsSelector: nil selects nothing, {} everything, a bad operator is an error) and
// pkg/fields/selector_test.go (escaped values, unsupported fields).
import { describe, expect, it } from 'vitest';
import {
  formatLabelSelector,
  labelSelectorRequirements,
  matchesLabelSelector,
  matchesLabelSet,
  matchFields,
  matchRequirements,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from './selectors.ts';

const matches = (sel: string, labels: Record<string, string>) => matchRequirements(parseLabelSelector(sel), labels);

describe('parseLabelSelector (labels.Parse)', () => {
  it('parses every operator of the text form', () => {
    expect(parseLabelSelector('x=a,y==b,z!=c, w in (p, q),v notin (r),!u,t')).toEqual([
      { key: 'x', op: '=', value: 'a' },
      { key: 'y', op: '=', value: 'b' },
      { key: 'z', op: '!=', value: 'c' },
      { key: 'w', op: 'in', values: ['p', 'q'] },
      { key: 'v', op: 'notin', values: ['r'] },
      { key: 'u', op: '!' },
      { key: 't', op: 'exists' },
    ]);
    expect(parseLabelSelector('app.kubernetes.io/name=web')).toEqual([
      { key: 'app.kubernetes.io/name', op: '=', value: 'web' },
    ]);
    expect(parseLabelSelector('x=')).toEqual([{ key: 'x', op: '=', value: '' }]);
  });

  it('takes an empty or absent selector as no requirement', () => {
    expect(parseLabelSelector('')).toEqual([]);
    expect(parseLabelSelector('  ')).toEqual([]);
    expect(parseLabelSelector(null)).toEqual([]);
    expect(parseLabelSelector(undefined)).toEqual([]);
  });

  it('refuses malformed selectors with the API server messages', () => {
    for (const [sel, msg] of [
      ['x=a,', `unable to parse requirement: found '', expected: identifier in "x=a,"`],
      ['a in (', 'unable to parse requirement: invalid label selector "a in ("'],
      ['-x=a', 'unable to parse requirement: invalid label key "-x" in selector "-x=a"'],
      ['x=a b', 'unable to parse requirement: invalid label selector "x=a b"'],
      [`x=${'v'.repeat(64)}`, `unable to parse requirement: invalid label value: "${'v'.repeat(64)}"`],
    ] as const) {
      expect(() => parseLabelSelector(sel), sel).toThrow(SelectorError);
      expect(() => parseLabelSelector(sel), sel).toThrow(msg);
    }
  });
});

describe('matchRequirements (labels.Selector.Matches)', () => {
  it('matches as apimachinery does', () => {
    const labels = { x: 'a', y: 'b' };
    expect(matches('', labels)).toBe(true);
    expect(matches('x=a', labels)).toBe(true);
    expect(matches('x=a,y=b', labels)).toBe(true);
    expect(matches('x=a,y!=b', labels)).toBe(false);
    expect(matches('x!=c', labels)).toBe(true);
    expect(matches('z!=c', labels)).toBe(true); // != holds for a missing key
    expect(matches('x in (a,b)', labels)).toBe(true);
    expect(matches('z in (a)', labels)).toBe(false);
    expect(matches('x notin (a)', labels)).toBe(false);
    expect(matches('z notin (a)', labels)).toBe(true);
    expect(matches('x', labels)).toBe(true);
    expect(matches('!x', labels)).toBe(false);
    expect(matches('!z', labels)).toBe(true);
    expect(matches('x', {})).toBe(false);
  });

  it('does not take inherited properties for labels', () => {
    expect(matches('toString', {})).toBe(false);
  });
});

describe('formatLabelSelector (labels.Selector.String)', () => {
  it('sorts requirements by key and in/notin values', () => {
    expect(formatLabelSelector(parseLabelSelector('z in (c,a),!y,b=1,a!=2,x notin (q,p),c'))).toBe(
      'a!=2,b=1,c,x notin (p,q),!y,z in (a,c)',
    );
  });
});

describe('labelSelectorRequirements (metav1.LabelSelectorAsSelector)', () => {
  it('turns matchLabels and matchExpressions into requirements', () => {
    const reqs = labelSelectorRequirements({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['fe', 'be'] },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(formatLabelSelector(reqs!)).toBe('app=web,env notin (dev),!legacy,owner,tier in (be,fe)');
  });

  it('nil selects nothing, {} selects everything', () => {
    expect(labelSelectorRequirements(undefined)).toBeUndefined();
    expect(labelSelectorRequirements(null)).toBeUndefined();
    expect(labelSelectorRequirements({})).toEqual([]);
    expect(matchesLabelSelector({ a: 'b' }, undefined)).toBe(false);
    expect(matchesLabelSelector({ a: 'b' }, {})).toBe(true);
    expect(matchesLabelSelector(undefined, {})).toBe(true);
  });

  it('refuses an unknown operator, and such a selector selects nothing', () => {
    const sel = { matchExpressions: [{ key: 'a', operator: 'Equals', values: ['b'] }] };
    expect(() => labelSelectorRequirements(sel)).toThrow('"Equals" is not a valid label selector operator');
    expect(matchesLabelSelector({ a: 'b' }, sel)).toBe(false);
  });

  it('matches objects as the Deployment, ClusterRole aggregation and Gateway API selectors need', () => {
    const sel = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe'] }] };
    expect(matchesLabelSelector({ app: 'web', tier: 'fe', extra: 'x' }, sel)).toBe(true);
    expect(matchesLabelSelector({ app: 'web', tier: 'be' }, sel)).toBe(false);
    expect(matchesLabelSelector({ tier: 'fe' }, sel)).toBe(false);
    // In with no values (values omitted) selects nothing; NotIn with none excludes nothing.
    expect(matchesLabelSelector({ a: 'x' }, { matchExpressions: [{ key: 'a', operator: 'In' }] })).toBe(false);
    expect(matchesLabelSelector({ a: 'x' }, { matchExpressions: [{ key: 'a', operator: 'NotIn' }] })).toBe(true);
  });
});

describe('matchesLabelSet (labels.SelectorFromSet)', () => {
  it('needs every pair of the set', () => {
    expect(matchesLabelSet({ app: 'web', v: '1' }, { app: 'web' })).toBe(true);
    expect(matchesLabelSet({ app: 'api' }, { app: 'web' })).toBe(false);
    expect(matchesLabelSet(undefined, { app: 'web' })).toBe(false);
    expect(matchesLabelSet({ app: 'web' }, {})).toBe(true);
  });
});

describe('field selectors (fields.ParseSelector)', () => {
  const allowed = new Set(['metadata.name', 'metadata.namespace', 'spec.nodeName']);

  it('parses =, == and != with escaped values, and matches missing fields as ""', () => {
    const reqs = parseFieldSelector('metadata.name==a\\=b, spec.nodeName!=n1', allowed, '"Pod"');
    expect(reqs).toEqual([
      { field: 'metadata.name', op: '=', value: 'a=b' },
      { field: 'spec.nodeName', op: '!=', value: 'n1' },
    ]);
    expect(matchFields(parseFieldSelector('metadata.name=web', allowed, '"Pod"'), { 'metadata.name': 'web' })).toBe(
      true,
    );
    expect(matchFields(parseFieldSelector('spec.nodeName=', allowed, '"Pod"'), {})).toBe(true);
    expect(matchFields(parseFieldSelector('spec.nodeName!=n1', allowed, '"Pod"'), { 'spec.nodeName': 'n1' })).toBe(
      false,
    );
    expect(parseFieldSelector('', allowed, '"Pod"')).toEqual([]);
  });

  it('refuses a field the resource does not support, naming it in a cause', () => {
    try {
      parseFieldSelector('status.phase=Running', allowed, '"Pod"');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SelectorError);
      expect((e as SelectorError).message).toBe('field label not supported: status.phase');
      expect((e as SelectorError).causes).toEqual([
        { reason: 'FieldValueInvalid', field: 'status.phase', message: 'field label not supported for "Pod"' },
      ]);
    }
    expect(() => parseFieldSelector('==', allowed, '"Pod"')).toThrow("invalid selector: '=='; can't understand '=='");
  });
});
