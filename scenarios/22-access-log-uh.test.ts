// Issue 13 item 1, as a new user meets it: a lab's Gateway writes an access log by default (the lab's GatewayParameters
// gwvendor-lab, named by GatewayClass gwvendor: defaultAccessLog), so `kubectl logs` of the proxy shows a line per
// request in Envoy's default format. The backend's endpoints go away (scaled to 0): the request gets 503 and its line
// carries Envoy's response flag UH (no healthy upstream), the first clue of what failed; scaled back, 200 again and the
// line reads `200 -`. config_dump's listener names where its access log came from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { markLogs } from '../lab/toolkit/logs.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s22-alog');
const host = 's22.example.com';
const POD_LABEL = 'app.orch.io/name=gw';
artifactNamespaces(ns);

/** Envoy's default access log line for GET /headers with this code and flags (the 19 fields of envoy.md). */
const line = (code: number, flags: string) =>
  new RegExp(
    `^\\[\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\] "GET /headers HTTP/1\\.1" ${code} ${flags} 0 \\d+ \\d+ (\\d+|-) "[^"]*" "[^"]*" "[0-9a-f-]+" "${host.replace(/\./g, '\\.')}" "[^"]*"$`,
  );

describe('scenario 22: the default access log shows UH when the backend has no endpoints', () => {
  let url: string;
  let admin: AdminSession;
  const req = () => ({ url, path: '/headers', host });

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    await expectHttpEventually(req(), { status: 200 }, { timeoutMs: 60_000 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('kubectl logs of the proxy shows the request in Envoy default format (200 -)', async () => {
    const mark = await markLogs(lab.kube, { namespace: ns, labelSelector: POD_LABEL });
    expect((await send(req())).status).toBe(200);
    await mark.waitFor('the access log line of GET /headers', line(200, '-'), { timeoutMs: 20_000 });
    // The same through kubectl, as a user reads it.
    const text = await lab.k(['logs', '-n', ns, '-l', POD_LABEL, '--tail=200']);
    expect(text.split('\n').some((l) => line(200, '-').test(l))).toBe(true);
  });

  it('config_dump: the listener names the GatewayParameters its access log came from', async () => {
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const dump = await configDump(admin);
    const listeners = dump.configs
      .filter((c) => c['@type'].endsWith('ListenersConfigDump'))
      .flatMap((c) => c.dynamic_listeners ?? [])
      .map((l: any) => l.active_state?.listener);
    const l = listeners.find((x: any) => x?.name === 'listener~8080');
    expect(l.metadata.filter_metadata['listener.gateway.gwvendor.dev']).toEqual({
      accessLog: 'GatewayParameters/gwvendor-system/gwvendor-lab',
    });
    expect(JSON.stringify(l)).toContain('envoy.extensions.access_loggers.file.v3.FileAccessLog');
  });

  it('the backend scaled to 0: 503 no healthy upstream, and the line carries UH', async () => {
    await lab.k(['scale', 'deploy/sampleapp', '-n', ns, '--replicas=0']);
    await expectHttpEventually(req(), { status: 503, body: 'no healthy upstream' });
    const mark = await markLogs(lab.kube, { namespace: ns, labelSelector: POD_LABEL });
    expect((await send(req())).status).toBe(503);
    await mark.waitFor('the access log line of the 503', line(503, 'UH'), { timeoutMs: 20_000 });
  });

  it('scaled back to 1: 200 again, and the line reads 200 -', async () => {
    await lab.k(['scale', 'deploy/sampleapp', '-n', ns, '--replicas=1']);
    await expectHttpEventually(req(), { status: 200 }, { timeoutMs: 60_000 });
    const mark = await markLogs(lab.kube, { namespace: ns, labelSelector: POD_LABEL });
    expect((await send(req())).status).toBe(200);
    await mark.waitFor('the access log line of the 200', line(200, '-'), { timeoutMs: 20_000 });
  });
});
