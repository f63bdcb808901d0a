// Policy attachment and precedence (attach-policies.ts) at one route entry, as the interfaces page's "Policies" states
// it: route rule > route > listener > gateway, then the older policy, then namespace/name; each field decided on its
// own, with the rule that chose the winner (what explain renders).
import { describe, expect, it } from 'vitest';
import { type AttachablePolicy, type AttachPoint, attachmentsOf, attachPolicies } from './attach-policies.ts';

function pol(name: string, created: string, o: Partial<AttachablePolicy>, ns = 'app'): AttachablePolicy {
  return {
    ref: { kind: 'TrafficPolicy', namespace: ns, name },
    key: `${ns}/${name}`,
    creationTimestamp: created,
    targetRefs: [],
    selectors: [],
    settings: {},
    ...o,
  };
}

const timeouts = { timeouts: { request: '5s' } };
const retry = { retry: { attempts: 2, retryOn: ['5xx'], statusCodes: [] } };
const at: AttachPoint = {
  gateway: { namespace: 'app', name: 'gw', labels: { tier: 'edge' } },
  listener: 'http',
  route: { namespace: 'app', name: 'web', labels: { app: 'web' } },
  rule: 'login',
};

describe('attachmentsOf', () => {
  it('finds each level by targetRef and selector, in the policy namespace only', () => {
    const p = pol('p', 't', {
      targetRefs: [
        { kind: 'Gateway', name: 'gw' },
        { kind: 'Gateway', name: 'gw', sectionName: 'http' },
        { kind: 'Gateway', name: 'gw', sectionName: 'https' },
        { kind: 'HTTPRoute', name: 'web' },
        { kind: 'HTTPRoute', name: 'web', sectionName: 'login' },
        { kind: 'HTTPRoute', name: 'other' },
      ],
      selectors: [
        { kind: 'Gateway', matchLabels: { tier: 'edge' } },
        { kind: 'HTTPRoute', matchLabels: { app: 'nope' } },
      ],
    });
    expect(attachmentsOf(p, at).map((c) => `${c.level} ${c.by}`)).toEqual([
      'gateway targetRef',
      'listener targetRef',
      'gateway selector',
      'route targetRef',
      'rule targetRef',
    ]);
    expect(attachmentsOf({ ...p, ref: { ...p.ref, namespace: 'elsewhere' }, key: 'elsewhere/p' }, at)).toEqual([]);
    // Without a listener or rule at the point, section targetRefs reach nothing.
    expect(attachmentsOf(p, { gateway: at.gateway }).map((c) => c.level)).toEqual(['gateway', 'gateway']);
  });
});

describe('attachPolicies', () => {
  it('a more specific policy wins over an older one; the rule says so', () => {
    const gw = pol('gw-wide', '2026-01-01T00:00:00Z', {
      targetRefs: [{ kind: 'Gateway', name: 'gw' }],
      settings: { ...timeouts, ...retry },
    });
    const route = pol('route', '2026-01-02T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web' }],
      settings: timeouts,
    });
    const d = attachPolicies(at, [gw, route]);
    expect(d.provenance).toEqual({ timeouts: 'TrafficPolicy/app/route', retry: 'TrafficPolicy/app/gw-wide' });
    expect(d.fields).toEqual([
      {
        field: 'timeouts',
        winner: 'TrafficPolicy/app/route',
        level: 'route',
        over: [{ policy: 'TrafficPolicy/app/gw-wide', level: 'gateway', rule: 'more specific' }],
      },
      { field: 'retry', winner: 'TrafficPolicy/app/gw-wide', level: 'gateway', over: [] },
    ]);
    expect(d.outcomes.get('app/gw-wide')).toEqual({
      won: ['retry'],
      lost: [{ field: 'timeouts', winner: 'TrafficPolicy/app/route', rule: 'more specific' }],
    });
  });

  it('on one level the older wins, then the name; a policy reaching twice counts at its most specific level', () => {
    const older = pol('z', '2026-01-01T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web' }],
      settings: timeouts,
    });
    const newer = pol('a', '2026-01-02T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web' }],
      settings: timeouts,
    });
    const twin = pol('b', '2026-01-01T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web' }],
      settings: timeouts,
    });
    expect(attachPolicies(at, [newer, older, twin]).fields[0]).toEqual({
      field: 'timeouts',
      winner: 'TrafficPolicy/app/b',
      level: 'route',
      over: [
        { policy: 'TrafficPolicy/app/z', level: 'route', rule: 'name' },
        { policy: 'TrafficPolicy/app/a', level: 'route', rule: 'older' },
      ],
    });
    const both = pol('both', '2026-01-03T00:00:00Z', {
      targetRefs: [{ kind: 'Gateway', name: 'gw' }],
      selectors: [{ kind: 'HTTPRoute', matchLabels: { app: 'web' } }],
      settings: timeouts,
    });
    const d = attachPolicies(at, [both, older]);
    expect(d.candidates.map((c) => `${c.policy.key} ${c.level}`)).toEqual([
      'app/both gateway',
      'app/both route',
      'app/z route',
    ]);
    // At route level both: z is older.
    expect(d.fields[0]).toMatchObject({
      winner: 'TrafficPolicy/app/z',
      over: [{ policy: 'TrafficPolicy/app/both', rule: 'older' }],
    });
  });

  it('a policy that supplies nothing for a field (invalid, unresolved) does not compete for it', () => {
    const empty = pol('empty', '2020-01-01T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web', sectionName: 'login' }],
    });
    const p = pol('p', '2026-01-01T00:00:00Z', { targetRefs: [{ kind: 'Gateway', name: 'gw' }], settings: retry });
    const d = attachPolicies(at, [empty, p]);
    expect(d.fields).toEqual([{ field: 'retry', winner: 'TrafficPolicy/app/p', level: 'gateway', over: [] }]);
    expect(d.outcomes.get('app/empty')).toEqual({ won: [], lost: [] });
  });
});
