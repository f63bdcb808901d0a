// TrafficPolicy rbac read into the IR (policy-rbac.ts): CIDRs as Envoy's CidrRange (a bare address is a host route),
// absent principals/permissions become `any`, and each problem is named by its field path.
import { describe, expect, it } from 'vitest';
import type { FieldReader } from './field-reader.ts';
import { parseCidr, rbacSettings } from './policy-rbac.ts';

function reader(): FieldReader & { problems: string[] } {
  const problems: string[] = [];
  return { problems, problem: (f, m) => problems.push(`${f}: ${m}`), duration: () => undefined };
}

describe('rbac settings', () => {
  it('parses CIDRs as Envoy does', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ addressPrefix: '10.0.0.0', prefixLen: 8 });
    expect(parseCidr('2001:db8::/32')).toEqual({ addressPrefix: '2001:db8::', prefixLen: 32 });
    expect(parseCidr('192.0.2.1')).toEqual({ addressPrefix: '192.0.2.1', prefixLen: 32 });
    for (const bad of ['10.0.0.300/8', '10.0.0.0/33', '::/129', '10.0.0.0/8/1', 'x/8', '10.0.0.0/']) {
      expect(parseCidr(bad), bad).toBeUndefined();
    }
  });

  it('fills any for absent lists, lower-cases header names, maps the action', () => {
    const r = reader();
    expect(
      rbacSettings(
        {
          action: 'Deny',
          policies: [{ name: 'p', permissions: [{ header: { name: 'User-Agent', prefix: 'sqlmap' } }] }],
        },
        r,
      ),
    ).toEqual({
      action: 'DENY',
      policies: [
        { name: 'p', principals: [{ any: true }], permissions: [{ header: { name: 'user-agent', prefix: 'sqlmap' } }] },
      ],
    });
    expect(r.problems).toEqual([]);
  });

  it('names every problem by its field and applies nothing', () => {
    const r = reader();
    const out = rbacSettings(
      {
        action: 'Allow',
        policies: [
          {
            name: 'a',
            principals: [{ remoteIp: '10.0.0.0/40' }, { directRemoteIp: '10.0.0.0/8', remoteIp: '10.0.0.0/8' }],
          },
          { name: 'a', permissions: [{ header: { name: 'x', regex: '(' } }, {}] },
        ],
      },
      r,
    );
    expect(out).toBeUndefined();
    expect(r.problems).toEqual([
      'spec.rbac.policies[0].principals[0].remoteIp: invalid CIDR "10.0.0.0/40" (use an address/prefix length such as 10.0.0.0/8)',
      'spec.rbac.policies[0].principals[1]: set exactly one of directRemoteIp, remoteIp, header',
      'spec.rbac.policies[1].name: duplicate policy name "a"',
      'spec.rbac.policies[1].permissions[0].header.regex: invalid RE2 regex "(": error parsing regexp: missing closing ): `(`',
      'spec.rbac.policies[1].permissions[1]: set exactly one of any, header',
    ]);
  });
});
