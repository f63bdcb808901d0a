// The TrafficPolicy CRD (system/manifests/crds/vendor/traffic-policy-fields.ts) against the embedded API server: bad
// rbac/jwt/buffer/compression/transformation input is refused with a Status naming the field (enums, patterns and
// the CEL one-of and isCIDR rules, as a real API server evaluates them), nothing stored; good input is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';

const CRDS = new URL('../../system/manifests/crds/gwvendor.yaml', import.meta.url).pathname;
let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab();
  await lab.k(['apply', '--server-side', '-f', CRDS]);
  await lab.k(['wait', '--for=condition=Established', 'crd/trafficpolicies.gateway.gwvendor.dev']);
});
afterAll(async () => {
  await lab?.stop();
});

const policy = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'TrafficPolicy',
    metadata: { name, namespace: 'default' },
    spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], ...spec },
  });

async function refused(name: string, spec: Record<string, unknown>): Promise<string> {
  const r = await lab.kubectl(['create', '-f', '-'], { input: policy(name, spec) });
  expect(r.code, r.stdout).not.toBe(0);
  const get = await lab.kubectl(['get', 'trafficpolicy', name, '-n', 'default']);
  expect(get.stderr).toContain('NotFound');
  return r.stderr;
}

describe('TrafficPolicy rbac schema', () => {
  it('refuses a bad CIDR, two principal kinds at once, an unknown action', async () => {
    expect(
      await refused('bad-cidr', {
        rbac: { action: 'Deny', policies: [{ name: 'p', principals: [{ remoteIp: '10.0.0.300/8' }] }] },
      }),
    ).toContain('spec.rbac.policies[0].principals[0].remoteIp: Invalid value: "string": must be a CIDR');
    expect(
      await refused('two-kinds', {
        rbac: {
          action: 'Allow',
          policies: [{ name: 'p', principals: [{ remoteIp: '10.0.0.0/8', header: { name: 'x', exact: 'y' } }] }],
        },
      }),
    ).toContain(
      'spec.rbac.policies[0].principals[0]: Invalid value: "object": exactly one of directRemoteIp, remoteIp, header',
    );
    expect(await refused('bad-action', { rbac: { action: 'Block', policies: [{ name: 'p' }] } })).toContain(
      'spec.rbac.action: Unsupported value: "Block"',
    );
  });

  it('jwt: refuses a provider with both an inline and a remote JWKS, and a remote path not starting with /', async () => {
    const remote = { backendRef: { name: 'idp', port: 8080 }, path: 'jwks' };
    const msg = await refused('two-jwks', { jwt: { providers: [{ name: 'p', jwks: { inline: '{}', remote } }] } });
    expect(msg).toContain('spec.jwt.providers[0].jwks: Invalid value: "object": exactly one of inline, remote');
    expect(msg).toContain('spec.jwt.providers[0].jwks.remote.path: Invalid value: "jwks"');
  });

  it('buffer, compression, transformation: a zero limit, a content type that is not type/subtype, a header name with a colon', async () => {
    expect(await refused('zero-buffer', { buffer: { maxRequestBytes: 0 } })).toContain(
      'spec.buffer.maxRequestBytes: Invalid value: 0: spec.buffer.maxRequestBytes in body should be greater than or equal to 1',
    );
    expect(await refused('bad-type', { compression: { contentTypes: ['json'] } })).toContain(
      'spec.compression.contentTypes[0]: Invalid value: "json"',
    );
    expect(
      await refused('bad-header', { transformation: { request: { set: [{ name: ':path', value: '/x' }] } } }),
    ).toContain('spec.transformation.request.set[0].name: Invalid value: ":path"');
  });

  it('stores a good one', async () => {
    const r = await lab.kubectl(['create', '-f', '-'], {
      input: policy('good-rbac', {
        rbac: {
          action: 'Allow',
          policies: [
            {
              name: 'office',
              principals: [{ directRemoteIp: '10.0.0.0/8' }, { header: { name: 'x-admin', present: true } }],
              permissions: [{ any: true }],
            },
          ],
        },
      }),
    });
    expect(r.stderr).toBe('');
  });
});
