// Policy attachment and precedence (attach-policies.ts) at one route entry, as the interfaces page's "Policies" states
// it: route rule > route > listener > gateway, then the older policy, then namespace/name; each field decided on its
// own, with the rule that chose the winner (what explain renders).
import { describe, expect, it } from 'vitest';
import { GATEWAY_GROUP, type PolicyField, type PolicyTargetRef, type TrafficPolicySpec } from '../model.ts';
import {
  type AttachablePolicy,
  type AttachLevel,
  type AttachPoint,
  attachmentsOf,
  attachPolicies,
  LEVELS,
} from './attach-policies.ts';
import { buildPolicyInfo } from './policies.ts';
import { MERGE_TYPES, type MergeType } from './policy-merge.ts';
import type { PolicySettings } from './types.ts';

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
      merged: [],
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
    expect(d.outcomes.get('app/empty')).toEqual({ won: [], lost: [], merged: [] });
  });
});

// mergeType (Envoy Gateway's BackendTrafficPolicy/ClientTrafficPolicy `mergeType`; kgateway's deep merge of sub-fields,
// kgateway issue #11528): levels × mergeType × fields, with real specs read by the control plane's own policies.ts.
describe('mergeType: a policy merging its fields onto lower-priority ones', () => {
  const world = { extension: () => undefined };
  const TARGET: Record<AttachLevel, PolicyTargetRef> = {
    gateway: { group: GATEWAY_GROUP, kind: 'Gateway', name: 'gw' },
    listener: { group: GATEWAY_GROUP, kind: 'Gateway', name: 'gw', sectionName: 'http' },
    route: { group: GATEWAY_GROUP, kind: 'HTTPRoute', name: 'web' },
    rule: { group: GATEWAY_GROUP, kind: 'HTTPRoute', name: 'web', sectionName: 'login' },
  };
  const tp = (name: string, created: string, level: AttachLevel, spec: Partial<TrafficPolicySpec>) =>
    buildPolicyInfo(
      {
        apiVersion: 'gateway.gwvendor.dev/v1alpha1',
        kind: 'TrafficPolicy',
        metadata: { name, namespace: 'app', creationTimestamp: created },
        spec: { targetRefs: [TARGET[level]], ...spec },
      },
      world,
      'strict',
    );
  const header = (name: string, value: string) => ({ name, value });
  const badIps = {
    name: 'bad-ips',
    principals: [{ remoteIp: { addressPrefix: '192.168.0.0', prefixLen: 16 } }],
    permissions: [{ any: true }],
  };
  /** Per field: the parent's value, the child's, and the child's setting as each merge makes it. */
  const FIELDS: {
    field: PolicyField;
    parent: Partial<TrafficPolicySpec>;
    child: Partial<TrafficPolicySpec>;
    expect: Record<'none' | MergeType, unknown>;
  }[] = [
    {
      field: 'timeouts',
      parent: { timeouts: { request: '10s', streamIdle: '30s' } },
      child: { timeouts: { request: '2s' } },
      expect: {
        none: { request: '2s' },
        JSONMerge: { request: '2s', streamIdle: '30s' },
        StrategicMerge: { request: '2s', streamIdle: '30s' },
      },
    },
    {
      field: 'retry',
      parent: { retry: { attempts: 2, retryOn: ['gateway-error'], perTryTimeout: '1s' } },
      child: { retry: { attempts: 5, retryOn: ['reset'] } },
      expect: {
        // The normalizer's defaults (retryOn, statusCodes) come after the merge: they never hide the parent's values.
        none: { attempts: 5, retryOn: ['reset'], statusCodes: [] },
        JSONMerge: { attempts: 5, retryOn: ['reset'], statusCodes: [], perTryTimeout: '1s' },
        StrategicMerge: { attempts: 5, retryOn: ['gateway-error', 'reset'], statusCodes: [], perTryTimeout: '1s' },
      },
    },
    {
      field: 'headerModifiers',
      parent: {
        headerModifiers: {
          request: { set: [header('x-a', 'parent'), header('x-b', 'parent')], remove: ['x-gone'] },
          response: { add: [header('x-served-by', 'gw')] },
        },
      },
      child: { headerModifiers: { request: { set: [header('X-A', 'child')], remove: ['x-drop'] } } },
      expect: {
        none: { request: { set: [header('X-A', 'child')], add: [], remove: ['x-drop'] } },
        JSONMerge: {
          request: { set: [header('X-A', 'child')], add: [], remove: ['x-drop'] },
          response: { set: [], add: [header('x-served-by', 'gw')], remove: [] },
        },
        // Keyed by header name (case-insensitive) as Gateway API's HTTPHeaderFilter (listMapKey=name).
        StrategicMerge: {
          request: { set: [header('X-A', 'child'), header('x-b', 'parent')], add: [], remove: ['x-gone', 'x-drop'] },
          response: { set: [], add: [header('x-served-by', 'gw')], remove: [] },
        },
      },
    },
    {
      field: 'cors',
      parent: { cors: { allowOrigins: ['https://a.example'], allowMethods: ['GET'], maxAge: 600 } },
      child: { cors: { allowOrigins: ['https://b.example'] } },
      expect: {
        none: { allowOrigins: [{ exact: 'https://b.example' }], allowMethods: [], allowHeaders: [], exposeHeaders: [] },
        JSONMerge: {
          allowOrigins: [{ exact: 'https://b.example' }],
          allowMethods: ['GET'],
          allowHeaders: [],
          exposeHeaders: [],
          maxAge: 600,
        },
        StrategicMerge: {
          allowOrigins: [{ exact: 'https://a.example' }, { exact: 'https://b.example' }],
          allowMethods: ['GET'],
          allowHeaders: [],
          exposeHeaders: [],
          maxAge: 600,
        },
      },
    },
    {
      field: 'rateLimit',
      parent: { rateLimit: { local: { tokenBucket: { maxTokens: 10, tokensPerFill: 5, fillInterval: '1s' } } } },
      child: { rateLimit: { local: { tokenBucket: { maxTokens: 1, fillInterval: '2s' } } } },
      expect: {
        none: { local: { maxTokens: 1, tokensPerFill: 1, fillInterval: '2s' } },
        JSONMerge: { local: { maxTokens: 1, tokensPerFill: 5, fillInterval: '2s' } },
        StrategicMerge: { local: { maxTokens: 1, tokensPerFill: 5, fillInterval: '2s' } },
      },
    },
    {
      field: 'faultInjection',
      parent: { faultInjection: { abort: { httpStatus: 503, percentage: 10 } } },
      child: { faultInjection: { delay: { fixedDelay: '1s' } } },
      expect: {
        none: { delay: { fixedDelay: '1s', perMillion: 1_000_000 } },
        JSONMerge: {
          delay: { fixedDelay: '1s', perMillion: 1_000_000 },
          abort: { httpStatus: 503, perMillion: 100_000 },
        },
        StrategicMerge: {
          delay: { fixedDelay: '1s', perMillion: 1_000_000 },
          abort: { httpStatus: 503, perMillion: 100_000 },
        },
      },
    },
    {
      // A field another helper added (issue 13 item 4): merged with no code of its own, its policies keyed by name.
      field: 'rbac',
      parent: {
        rbac: {
          action: 'Deny',
          policies: [
            { name: 'bad-ips', principals: [{ remoteIp: '10.0.0.0/8' }] },
            { name: 'bots', principals: [{ header: { name: 'user-agent', exact: 'bot' } }] },
          ],
        },
      },
      child: {
        rbac: { action: 'Deny', policies: [{ name: 'bad-ips', principals: [{ remoteIp: '192.168.0.0/16' }] }] },
      },
      expect: {
        none: { action: 'DENY', policies: [badIps] },
        JSONMerge: { action: 'DENY', policies: [badIps] },
        StrategicMerge: {
          action: 'DENY',
          policies: [
            badIps,
            {
              name: 'bots',
              principals: [{ header: { name: 'user-agent', exact: 'bot' } }],
              permissions: [{ any: true }],
            },
          ],
        },
      },
    },
  ];
  // The child above the parent: a more specific level (the child created later), or the same level (created earlier).
  const PAIRS = LEVELS.flatMap((lo) =>
    LEVELS.filter((hi) => LEVELS.indexOf(hi) >= LEVELS.indexOf(lo)).map((hi) => [lo, hi] as const),
  );
  const MERGES = ['none', ...MERGE_TYPES] as const;
  const cases = PAIRS.flatMap(([lo, hi]) => MERGES.flatMap((m) => FIELDS.map((f) => ({ lo, hi, m, ...f }))));

  it.each(cases)(
    '$field: child at $hi over parent at $lo, mergeType $m',
    ({ lo, hi, m, field, parent, child, expect: want }) => {
      const sameLevel = lo === hi;
      const p = tp('parent', sameLevel ? '2026-01-02T00:00:00Z' : '2026-01-01T00:00:00Z', lo, parent);
      const c = tp('child', sameLevel ? '2026-01-01T00:00:00Z' : '2026-01-02T00:00:00Z', hi, {
        ...child,
        ...(m !== 'none' ? { mergeType: m } : {}),
      });
      expect(p.accepted.ok && c.accepted.ok).toBe(true);
      const d = attachPolicies(at, [p, c]);
      expect(d.settings[field]).toEqual(want[m]);
      const rule = sameLevel ? 'older' : 'more specific';
      if (m === 'none') {
        expect(d.provenance[field]).toBe('TrafficPolicy/app/child');
        expect(d.fields).toEqual([
          {
            field,
            winner: 'TrafficPolicy/app/child',
            level: hi,
            over: [{ policy: 'TrafficPolicy/app/parent', level: lo, rule }],
          },
        ]);
        expect(d.outcomes.get('app/parent')).toEqual({
          won: [],
          lost: [{ field, winner: 'TrafficPolicy/app/child', rule }],
          merged: [],
        });
      } else {
        expect(d.provenance[field]).toBe('TrafficPolicy/app/child+TrafficPolicy/app/parent');
        expect(d.fields).toEqual([
          {
            field,
            winner: 'TrafficPolicy/app/child',
            level: hi,
            over: [{ policy: 'TrafficPolicy/app/parent', level: lo, rule: 'merged', mergeType: m }],
          },
        ]);
        const policies = ['TrafficPolicy/app/child', 'TrafficPolicy/app/parent'];
        expect(d.outcomes.get('app/parent')).toEqual({ won: [], lost: [], merged: [{ field, policies }] });
        expect(d.outcomes.get('app/child')).toEqual({ won: [field], lost: [], merged: [{ field, policies }] });
      }
    },
  );

  it('a mergeType on the lower policy does nothing: the higher one replaces it', () => {
    const p = tp('parent', '2026-01-01T00:00:00Z', 'gateway', {
      mergeType: 'JSONMerge',
      timeouts: { streamIdle: '30s' },
    });
    const c = tp('child', '2026-01-02T00:00:00Z', 'route', { timeouts: { request: '2s' } });
    const d = attachPolicies(at, [p, c]);
    expect(d.settings.timeouts).toEqual({ request: '2s' });
    expect(d.provenance.timeouts).toBe('TrafficPolicy/app/child');
  });

  it('merges chain down while each policy has a mergeType; the first without one ends it and the rest lose', () => {
    const gw = tp('gw', '2026-01-01T00:00:00Z', 'gateway', { timeouts: { request: '9s', streamIdle: '9s' } });
    const listener = tp('listener', '2026-01-01T00:00:00Z', 'listener', { timeouts: { streamIdle: '30s' } });
    const route = tp('route', '2026-01-01T00:00:00Z', 'route', { mergeType: 'JSONMerge', timeouts: { request: '3s' } });
    const rule = tp('rule', '2026-01-01T00:00:00Z', 'rule', {
      mergeType: 'StrategicMerge',
      timeouts: { request: '1s' },
    });
    const d = attachPolicies(at, [gw, listener, route, rule]);
    expect(d.settings.timeouts).toEqual({ request: '1s', streamIdle: '30s' });
    expect(d.provenance.timeouts).toBe('TrafficPolicy/app/rule+TrafficPolicy/app/route+TrafficPolicy/app/listener');
    expect(d.fields[0]!.over).toEqual([
      { policy: 'TrafficPolicy/app/route', level: 'route', rule: 'merged', mergeType: 'StrategicMerge' },
      { policy: 'TrafficPolicy/app/listener', level: 'listener', rule: 'merged', mergeType: 'JSONMerge' },
      { policy: 'TrafficPolicy/app/gw', level: 'gateway', rule: 'more specific', to: 'TrafficPolicy/app/listener' },
    ]);
    expect(d.outcomes.get('app/gw')!.lost).toEqual([
      { field: 'timeouts', winner: 'TrafficPolicy/app/listener', rule: 'more specific' },
    ]);
  });

  it('a field with a mergeType but another field without a merge partner: each field is decided on its own', () => {
    const gw = tp('gw', '2026-01-01T00:00:00Z', 'gateway', { retry: { attempts: 3 } });
    const route = tp('route', '2026-01-02T00:00:00Z', 'route', { mergeType: 'JSONMerge', timeouts: { request: '3s' } });
    const d = attachPolicies(at, [gw, route]);
    expect(d.provenance).toEqual({ timeouts: 'TrafficPolicy/app/route', retry: 'TrafficPolicy/app/gw' });
    expect(d.fields.every((f) => f.over.length === 0)).toBe(true);
  });

  it('extAuth never merges (a reference resolved in its own namespace): the winner replaces', () => {
    const ext = (name: string) => ({
      disabled: false as const,
      ext: { filterName: name } as unknown as Extract<PolicySettings['extAuth'], { disabled: false }>['ext'],
    });
    const gw = pol('gw', '2026-01-01T00:00:00Z', {
      targetRefs: [{ kind: 'Gateway', name: 'gw' }],
      settings: { extAuth: ext('a') },
      spec: { extAuth: { extensionRef: { name: 'a' } } },
    });
    const route = pol('route', '2026-01-02T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web' }],
      settings: { extAuth: { disabled: true } },
      spec: { extAuth: { disable: true } },
      mergeType: 'JSONMerge',
    });
    const d = attachPolicies(at, [gw, route]);
    expect(d.settings.extAuth).toEqual({ disabled: true });
    expect(d.fields[0]!.over).toEqual([{ policy: 'TrafficPolicy/app/gw', level: 'gateway', rule: 'more specific' }]);
  });

  it('a merge whose result is invalid is not made: the winner alone applies, and the decision says why', () => {
    const gw = pol('gw', '2026-01-01T00:00:00Z', {
      targetRefs: [{ kind: 'Gateway', name: 'gw' }],
      settings: { urlRewrite: { pathRegex: { pattern: '^/(a)/(b)', substitution: '/\\2' } } },
      spec: { urlRewrite: { pathRegex: { pattern: '^/(a)/(b)', substitution: '/\\2' } } },
    });
    const route = pol('route', '2026-01-02T00:00:00Z', {
      targetRefs: [{ kind: 'HTTPRoute', name: 'web' }],
      settings: { urlRewrite: { pathRegex: { pattern: '^/(x)', substitution: '/\\1' } } },
      // As written by hand here: only the pattern, which leaves the parent's \2 without a group.
      spec: { urlRewrite: { pathRegex: { pattern: '^/(x)' } } },
      mergeType: 'JSONMerge',
    });
    const d = attachPolicies(at, [gw, route]);
    expect(d.settings.urlRewrite).toEqual({ pathRegex: { pattern: '^/(x)', substitution: '/\\1' } });
    expect(d.provenance.urlRewrite).toBe('TrafficPolicy/app/route');
    expect(d.fields[0]!.mergeRefused).toMatch(/spec\.urlRewrite\.pathRegex\.substitution/);
    expect(d.fields[0]!.over).toEqual([{ policy: 'TrafficPolicy/app/gw', level: 'gateway', rule: 'more specific' }]);
  });
});
