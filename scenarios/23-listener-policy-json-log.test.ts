// Issue 13 item 1: a ListenerPolicy on a Gateway writes a JSON access log to stdout keeping only the 5xx (Envoy's
// status_code_filter GE 500), in place of the lab's default text log. A user sends a 200 and a 503 and finds one JSON
// object, with the operators they asked for; the policy reads Accepted and Attached, config_dump's listener names it.
// Bad input: an unknown filter op is refused by the API server with a Status naming the field; an unknown %OPERATOR%
// is Accepted=False with the proxy's own message, and the proxy keeps serving with the last good policy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { markLogs } from '../lab/toolkit/logs.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s23-json');
const host = 's23.example.com';
const POD_LABEL = 'app.orch.io/name=gw';
artifactNamespaces(ns);

const policy = (name: string, format: string, op = 'GE') => `
apiVersion: ${VENDOR}
kind: ListenerPolicy
metadata: {name: ${name}, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  accessLog:
    - fileSink:
        path: /dev/stdout
        ${format}
      filter: {statusCode: {op: ${op}, value: 500}}
`;
const JSON_FORMAT =
  'jsonFormat: {code: "%RESPONSE_CODE%", flags: "%RESPONSE_FLAGS%", path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%", route: "%ROUTE_NAME%", cluster: "%UPSTREAM_CLUSTER%", details: "%RESPONSE_CODE_DETAILS%"}';

function listenerOf(dump: Awaited<ReturnType<typeof configDump>>): any {
  return dump.configs
    .filter((c) => c['@type'].endsWith('ListenersConfigDump'))
    .flatMap((c) => c.dynamic_listeners ?? [])
    .map((l: any) => l.active_state?.listener)
    .find((x: any) => x?.name === 'listener~8080');
}

describe('scenario 23: a ListenerPolicy with a JSON access log keeping only the 5xx', () => {
  let url: string;
  let admin: AdminSession;
  const req = (path: string) => ({ url, path, host });

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    await expectHttpEventually(req('/headers'), { status: 200 }, { timeoutMs: 60_000 });
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('the policy is Accepted and Attached, and config_dump names it on the listener', async () => {
    await lab.kube.apply(policy('json-5xx', JSON_FORMAT));
    await lab.kube.waitForCondition(VENDOR, 'ListenerPolicy', 'json-5xx', ns, 'Accepted', { reason: 'Valid' });
    await lab.kube.waitForCondition(VENDOR, 'ListenerPolicy', 'json-5xx', ns, 'Attached', { reason: 'Attached' });
    const l = await waitFor('config_dump listener~8080 to carry the policy', async () => {
      const x = listenerOf(await configDump(admin));
      const prov = x?.metadata?.filter_metadata?.['listener.gateway.gwvendor.dev'];
      return { ok: prov?.accessLog === `ListenerPolicy/${ns}/json-5xx`, value: x, seen: prov };
    });
    const log = l.filter_chains[0].filters[0].typed_config.access_log;
    expect(log).toHaveLength(1);
    expect(log[0].filter.status_code_filter.comparison).toMatchObject({ op: 'GE', value: { default_value: 500 } });
  });

  it('a 200 and a 503: one JSON line, the 503 with its fields', async () => {
    const mark = await markLogs(lab.kube, { namespace: ns, labelSelector: POD_LABEL });
    const t0 = new Date().toISOString();
    expect((await send(req('/headers'))).status).toBe(200);
    expect((await send(req('/status/503'))).status).toBe(503);
    const lines = await mark.waitFor('the JSON line of the 503', /^\{"code":"503"/, { timeoutMs: 20_000 });
    // JSON lines, and default-format lines (`[<ISO start time>] "GET ...`) of these requests, which the policy
    // replaced: none of those (lines of earlier requests may still come: the proxy writes its log once a second).
    const defaultLine = (x: string) => {
      const m = /^\[(\d{4}-\d\d-\d\dT[^\]]*)\] "/.exec(x);
      return !!m && m[1]! >= t0;
    };
    const access = lines.filter((x) => x.startsWith('{') || defaultLine(x));
    const parse = (x: string) => {
      try {
        return JSON.parse(x);
      } catch {
        return x;
      }
    };
    expect(access.map(parse)).toEqual([
      {
        code: '503',
        flags: '-',
        path: '/status/503',
        route: expect.any(String),
        cluster: `kube_${ns}_sampleapp_8000`,
        details: 'via_upstream',
      },
    ]);
  });

  it('bad input: an unknown op is refused naming the field; an unknown operator is Accepted=False, traffic unaffected', async () => {
    const refused = await lab.kube.apply(policy('bad-op', JSON_FORMAT, 'GT')).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/spec\.accessLog\[0\]\.filter\.statusCode\.op/);
    expect(refused).toMatch(/"GT"|GT/);
    expect(await lab.kube.get(VENDOR, 'ListenerPolicy', 'bad-op', ns)).toBeUndefined();

    await lab.kube.apply(policy('bad-format', 'stringFormat: "%NOPE%"'));
    const bad = await lab.kube.waitForCondition(VENDOR, 'ListenerPolicy', 'bad-format', ns, 'Accepted', {
      status: 'False',
      reason: 'Invalid',
    });
    const accepted = bad.status.conditions.find((c: any) => c.type === 'Accepted');
    expect(accepted.message).toBe('spec.accessLog[0].fileSink.stringFormat: Not supported field in StreamInfo: NOPE');
    await expectHttpEventually(req('/headers'), { status: 200 });
    const prov = listenerOf(await configDump(admin)).metadata.filter_metadata['listener.gateway.gwvendor.dev'];
    expect(prov.accessLog).toBe(`ListenerPolicy/${ns}/json-5xx`);
  });
});
