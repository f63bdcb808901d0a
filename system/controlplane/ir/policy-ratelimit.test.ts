// TrafficPolicy rateLimit (policy-ratelimit.ts): a global rate limit's descriptors as Envoy's rate limit actions, the
// problems an entry with no or two kinds earns (input the CRD's CEL refuses but offline translate may read), and the
// merge rule (mergeType): a local bucket merges, a global rate limit does not (it names a GatewayExtension).
import { describe, expect, it } from 'vitest';
import type { ExtensionInfo } from './extensions.ts';
import { fieldSettingsOf } from './policies.ts';
import { rateLimitSettings } from './policy-ratelimit.ts';

const reader = () => {
  const problems: string[] = [];
  return {
    problems,
    r: { problem: (f: string, m: string) => problems.push(`${f}: ${m}`), duration: (_f: string, v?: string) => v },
  };
};

const rls: ExtensionInfo = {
  ref: { kind: 'GatewayExtension', namespace: 'app', name: 'rls' },
  generation: 1,
  accepted: { ok: true, reason: 'Accepted', message: '' },
  resolvedRefs: { ok: true, reason: 'ResolvedRefs', message: '' },
  rateLimit: {
    filterName: 'envoy.filters.http.ratelimit/app/rls',
    extension: { kind: 'GatewayExtension', namespace: 'app', name: 'rls' },
    cluster: { name: 'kube_app_rls_8081', namespace: 'app', service: 'rls', port: 8081, protocol: 'http2' },
    domain: 'd',
    timeout: '0.020s',
    failOpen: true,
  },
};
const world = { extension: (ns: string, name: string) => (ns === 'app' && name === 'rls' ? rls : undefined) };

describe('rateLimit.global', () => {
  it('reads descriptors entry by entry; the extension resolves', () => {
    const { r, problems } = reader();
    const out = rateLimitSettings(
      {
        global: {
          extensionRef: { name: 'rls' },
          descriptors: [
            { entries: [{ remoteAddress: {} }, { header: { name: 'X-User', key: 'user' } }] },
            { entries: [{ genericKey: { value: 'api' } }] },
          ],
        },
      },
      'app',
      world,
      r,
    );
    expect(problems).toEqual([]);
    expect(out.settings?.global?.descriptors).toEqual([
      [{ kind: 'remoteAddress' }, { kind: 'header', name: 'x-user', key: 'user' }],
      [{ kind: 'genericKey', value: 'api' }],
    ]);
    expect(out.refs).toMatchObject({ ok: true, field: 'rateLimit', extension: 'app/rls' });
  });

  it('an entry with two kinds or none is a problem naming it; a missing extension is ResolvedRefs=False', () => {
    const { r, problems } = reader();
    const out = rateLimitSettings(
      {
        global: {
          extensionRef: { name: 'nope' },
          descriptors: [{ entries: [{ remoteAddress: {}, genericKey: { value: 'a' } }, {}] }],
        },
      },
      'app',
      world,
      r,
    );
    expect(problems).toEqual([
      'spec.rateLimit.global.descriptors[0].entries[0]: set exactly one of remoteAddress, header and genericKey',
      'spec.rateLimit.global.descriptors[0].entries[1]: set exactly one of remoteAddress, header and genericKey',
    ]);
    expect(out.refs).toMatchObject({
      ok: false,
      reason: 'BackendNotFound',
      message: 'GatewayExtension app/nope not found',
    });
    expect(out.settings).toBeUndefined();
  });

  it('merges (mergeType): a local bucket merges, a global rate limit does not', () => {
    expect(fieldSettingsOf('rateLimit', { local: { tokenBucket: { maxTokens: 2, fillInterval: '1s' } } })).toEqual({
      settings: { local: { maxTokens: 2, tokensPerFill: 1, fillInterval: '1s' } },
      problems: [],
    });
    const g = fieldSettingsOf('rateLimit', { global: { extensionRef: { name: 'rls' }, descriptors: [] } });
    expect(g?.settings).toBeUndefined();
    expect(g?.problems).toEqual([
      'spec.rateLimit.global: a global rate limit does not merge (it names a GatewayExtension)',
    ]);
  });
});
