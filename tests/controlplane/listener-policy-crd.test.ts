// The ListenerPolicy CRD (system/manifests/crds/vendor/listener-policy.ts) and GatewayParameters.defaultAccessLog
// against the embedded API server: bad input is refused with a Status naming the field (enums, patterns, bounds, the
// CEL rule on the formats, as a real API server evaluates them), nothing stored; good input is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';

const CRDS = new URL('../../system/manifests/crds/gwvendor.yaml', import.meta.url).pathname;
let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab();
  await lab.k(['apply', '--server-side', '-f', CRDS]);
  await lab.k(['wait', '--for=condition=Established', 'crd/listenerpolicies.gateway.gwvendor.dev']);
});
afterAll(async () => {
  await lab?.stop();
});

const GW_REF = [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }];
const policy = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'ListenerPolicy',
    metadata: { name, namespace: 'default' },
    spec: { targetRefs: GW_REF, ...spec },
  });

async function refused(name: string, spec: Record<string, unknown>): Promise<string> {
  const r = await lab.kubectl(['create', '-f', '-'], { input: policy(name, spec) });
  expect(r.code, r.stdout).not.toBe(0);
  const get = await lab.kubectl(['get', 'listenerpolicy', name, '-n', 'default']);
  expect(get.stderr).toContain('NotFound');
  return r.stderr;
}

describe('ListenerPolicy schema', () => {
  it('access log: refuses an unknown op, an unknown response flag, both formats, a relative path', async () => {
    const sink = { path: '/dev/stdout' };
    expect(
      await refused('op', { accessLog: [{ fileSink: sink, filter: { statusCode: { op: 'GT', value: 500 } } }] }),
    ).toContain('spec.accessLog[0].filter.statusCode.op: Unsupported value: "GT"');
    expect(await refused('flag', { accessLog: [{ fileSink: sink, filter: { responseFlags: ['XX'] } }] })).toContain(
      'spec.accessLog[0].filter.responseFlags[0]: Unsupported value: "XX"',
    );
    expect(
      await refused('both', {
        accessLog: [{ fileSink: { path: '/dev/stdout', stringFormat: '%PROTOCOL%', jsonFormat: { a: 'b' } } }],
      }),
    ).toContain('spec.accessLog[0].fileSink: Invalid value: "object": set at most one of stringFormat and jsonFormat');
    expect(await refused('relative', { accessLog: [{ fileSink: { path: 'access.log' } }] })).toContain(
      'spec.accessLog[0].fileSink.path: Invalid value: "access.log"',
    );
  });

  it('listener settings: refuses a bad duration, an unknown transformation, out-of-range sizes, a route target', async () => {
    expect(await refused('idle', { idleTimeout: '30 seconds' })).toContain(
      'spec.idleTimeout: Invalid value: "30 seconds"',
    );
    expect(await refused('server', { serverHeaderTransformation: 'Replace' })).toContain(
      'spec.serverHeaderTransformation: Unsupported value: "Replace"',
    );
    expect(await refused('kb', { maxRequestHeadersKb: 0 })).toContain('spec.maxRequestHeadersKb: Invalid value: 0');
    expect(await refused('hops', { xffNumTrustedHops: -1 })).toContain('spec.xffNumTrustedHops: Invalid value: -1');
    const r = await lab.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'gateway.gwvendor.dev/v1alpha1',
        kind: 'ListenerPolicy',
        metadata: { name: 'route', namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'web' }] },
      }),
    });
    expect(r.stderr).toContain('spec.targetRefs[0].kind: Unsupported value: "HTTPRoute"');
  });

  it('stores a good one, and GatewayParameters with defaultAccessLog', async () => {
    const good = await lab.kubectl(['create', '-f', '-'], {
      input: policy('good', {
        accessLog: [
          {
            fileSink: { path: '/dev/stdout', jsonFormat: { code: '%RESPONSE_CODE%' } },
            filter: { statusCode: { op: 'GE', value: 500 }, responseFlags: ['UH', 'UF'] },
          },
        ],
        idleTimeout: '30s',
        xffNumTrustedHops: 1,
        useRemoteAddress: true,
        maxRequestHeadersKb: 96,
        serverHeaderTransformation: 'PassThrough',
        preserveHttp1HeaderCase: true,
      }),
    });
    expect(good.stderr).toBe('');
    const gwp = await lab.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'gateway.gwvendor.dev/v1alpha1',
        kind: 'GatewayParameters',
        metadata: { name: 'lab', namespace: 'default' },
        spec: { defaultAccessLog: { enabled: true } },
      }),
    });
    expect(gwp.stderr).toBe('');
  });
});
