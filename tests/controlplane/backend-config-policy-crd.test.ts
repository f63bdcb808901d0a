// The BackendConfigPolicy CRD (system/manifests/crds/vendor/backend-config-policy.ts) on the embedded API server with
// the real kubectl: bad input is refused with a Status naming the field and its limit (enums, bounds, patterns, the
// load balancer's one-of and a hash policy's one-of in CEL), and nothing is stored; a good policy is stored as sent.
// As the API server does for any CRD (apiextensions-apiserver's structural schema and CEL validation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { REPO_ROOT } from '../../system/image.ts';

let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab();
  await lab.k(['apply', '--server-side', '-f', `${REPO_ROOT}/system/manifests/crds/gwvendor.yaml`]);
  await lab.k(['wait', '--for=condition=Established', 'crd/backendconfigpolicies.gateway.gwvendor.dev']);
}, 60_000);

afterAll(async () => {
  await lab?.stop();
});

const policy = (spec: Record<string, unknown>, name = 'p') =>
  JSON.stringify({
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'BackendConfigPolicy',
    metadata: { name, namespace: 'default' },
    spec: { targetRefs: [{ group: '', kind: 'Service', name: 'app' }], ...spec },
  });

async function refused(spec: Record<string, unknown>): Promise<string> {
  const r = await lab.kubectl(['create', '-f', '-'], { input: policy(spec, 'bad') });
  expect(r.code).not.toBe(0);
  const got = await lab.kubectl(['get', 'backendconfigpolicy', 'bad', '-n', 'default']);
  expect(got.stderr).toContain('NotFound');
  return r.stderr;
}

describe('BackendConfigPolicy schema', () => {
  it('stores a good policy as sent', async () => {
    const spec = {
      connectTimeout: '2s',
      loadBalancer: { ringHash: { hashPolicies: [{ header: { name: 'x-user' } }] } },
      healthCheck: {
        http: { path: '/healthz' },
        interval: '5s',
        timeout: '1s',
        unhealthyThreshold: 2,
        healthyThreshold: 1,
      },
      outlierDetection: { consecutive5xx: 3, maxEjectionPercent: 50 },
      circuitBreakers: { maxConnections: 10 },
    };
    await lab.k(['create', '-f', '-'], policy(spec, 'good'));
    const got = JSON.parse(await lab.k(['get', 'bcp', 'good', '-n', 'default', '-o', 'json']));
    expect(got.spec.loadBalancer).toEqual(spec.loadBalancer);
    expect(got.spec.healthCheck).toEqual(spec.healthCheck);
  });

  it('refuses bad values naming the field and the limit', async () => {
    expect(await refused({ connectTimeout: '5 seconds' })).toContain('spec.connectTimeout');
    expect(await refused({ outlierDetection: { maxEjectionPercent: 101 } })).toMatch(
      /spec\.outlierDetection\.maxEjectionPercent: Invalid value: 101: .*less than or equal to 100/,
    );
    expect(await refused({ circuitBreakers: { maxConnections: 0 } })).toContain('spec.circuitBreakers.maxConnections');
    expect(await refused({ http1ProtocolOptions: { headerFormat: 'Shouting' } })).toMatch(
      /spec\.http1ProtocolOptions\.headerFormat: Unsupported value: "Shouting"/,
    );
    expect(
      await refused({
        healthCheck: {
          http: { path: 'healthz' },
          interval: '1s',
          timeout: '1s',
          unhealthyThreshold: 1,
          healthyThreshold: 1,
        },
      }),
    ).toContain('spec.healthCheck.http.path');
    expect(await refused({ healthCheck: { interval: '1s' } })).toContain('spec.healthCheck.http: Required value');
    expect(await refused({ targetRefs: [{ group: '', kind: 'Deployment', name: 'app' }] })).toContain(
      'spec.targetRefs[0].kind: Unsupported value: "Deployment"',
    );
  });

  it('refuses two load balancing policies, and a hash policy that is not exactly one kind (CEL)', async () => {
    expect(await refused({ loadBalancer: { roundRobin: {}, random: {} } })).toContain(
      'at most one of roundRobin, leastRequest, random, ringHash or maglev may be set',
    );
    expect(await refused({ loadBalancer: { maglev: { hashPolicies: [{ terminal: true }] } } })).toContain(
      'exactly one of header, sourceIP or queryParameter must be set',
    );
  });
});
