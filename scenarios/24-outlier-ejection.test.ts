// Issue 13 item 2 as a user meets it: one of a Service's two pods goes bad (the sample application with
// --fail-status 500) and half the requests through the Gateway fail. A BackendConfigPolicy with outlierDetection
// (consecutive5xx 3, maxEjectionPercent 50) fixes it: after three 500s in a row the proxy ejects the pod, `/clusters`
// shows it `/failed_outlier_check` as Envoy prints it, the stats count the ejection
// (cluster.<name>.outlier_detection.ejections_enforced_consecutive_5xx, ejections_active), traffic goes to the healthy
// pod only, the cluster's config_dump names the policy (provenance), the policy reads Accepted/Attached on the Gateway,
// and `explain bcp/<name>` names the ejected host and why. (Envoy: docs arch_overview/upstream/outlier.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s24-outlier');
const host = 's24.example.com';
const CLUSTER = `kube_${ns}_web_8000`;
artifactNamespaces(ns);

const pod = (role: string, args: string, probe: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${role}, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: web, role: ${role}}}
  template:
    metadata: {labels: {app: web, role: ${role}}}
    spec:
      containers:
      - name: web
        image: gwlab.local/system:0.1.0
        args: [sampleapp${args}]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {${probe}, periodSeconds: 1}
`;

const resources = `${namespaceWithGateway(ns)}---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8000, targetPort: 8080}]
---${pod('good', '', 'httpGet: {path: /status/200, port: 8080}')}---${pod('bad', ', --fail-status, "500"', 'tcpSocket: {port: 8080}')}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: web, port: 8000}]}]
`;

const POLICY = `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: BackendConfigPolicy
metadata: {name: eject, namespace: ${ns}}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  outlierDetection: {consecutive5xx: 3, interval: 10s, baseEjectionTime: 5m, maxEjectionPercent: 50}
`;

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/[.~]/g, '\\$&')}: (\\d+)$`, 'm'))?.[1] ?? 0);

describe('outlier detection: a pod answering 500 is ejected, traffic goes to the healthy one', () => {
  let admin: AdminSession | undefined;
  let url: string;
  let badHost: string;
  let goodHost: string;
  const req = () => ({ url, path: '/get', host });

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await Promise.all([
      lab.kube.waitForRollout('good', ns, { timeoutMs: 90_000 }),
      lab.kube.waitForRollout('bad', ns, { timeoutMs: 90_000 }),
    ]);
    const ip = async (role: string) =>
      (await lab.kube.list('v1', 'Pod', ns, `role=${role}`)).find((p) => p.status?.phase === 'Running')!.status!
        .podIP as string;
    badHost = `${await ip('bad')}:8080`;
    goodHost = `${await ip('good')}:8080`;
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('the bug: without the policy, requests that land on the bad pod fail with its 500', async () => {
    const codes = await waitFor('both pods to take requests through the Gateway (some 200, some 500)', async () => {
      const got: number[] = [];
      for (let i = 0; i < 10; i++) got.push((await send(req()).catch(() => ({ status: 0 }))).status);
      return { ok: got.includes(200) && got.includes(500), value: got, seen: got };
    });
    expect(codes.filter((c) => c === 500).length).toBeGreaterThan(0);
  });

  it('the fix: outlierDetection ejects the pod after 3 consecutive 500s; then every request is 200', async () => {
    await lab.kube.apply(POLICY);
    const p = await lab.kube.waitForCondition(VENDOR, 'BackendConfigPolicy', 'eject', ns, 'Attached', {
      timeoutMs: 60_000,
    });
    expect(p.status.ancestors[0].ancestorRef).toMatchObject({ kind: 'Gateway', namespace: ns, name: 'gw' });
    expect(
      p.status.ancestors[0].conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
    ).toEqual(['Accepted=True', 'Attached=True']);
    // The proxy has the cluster with outlier_detection, and its provenance names the policy.
    const cluster = await waitFor(`config_dump's ${CLUSTER} to carry outlier_detection`, async () => {
      const dump = await configDump(admin!);
      const c = dump.configs
        .flatMap((x) => x.dynamic_active_clusters ?? [])
        .map((x: any) => x.cluster)
        .find((x: any) => x?.name === CLUSTER);
      return { ok: !!c?.outlier_detection, value: c, seen: c };
    });
    expect(cluster.outlier_detection).toEqual({
      consecutive_5xx: 3,
      interval: '10s',
      base_ejection_time: '300s',
      max_ejection_percent: 50,
    });
    expect(cluster.metadata.filter_metadata['merge.BackendConfigPolicy.gateway.gwvendor.dev']).toEqual({
      outlierDetection: `BackendConfigPolicy/${ns}/eject`,
    });
    // Requests hit the bad pod until it is ejected; then 20 in a row are 200.
    await expectHttpEventually(req(), { status: 200 }, { consecutive: 20, timeoutMs: 60_000 });
  });

  it('/clusters shows the bad pod /failed_outlier_check as Envoy prints it, the good one healthy; ejection stats', async () => {
    const clusters = (await admin!.get('/clusters')).text;
    expect(clusters).toContain(`${CLUSTER}::${badHost}::health_flags::/failed_outlier_check`);
    expect(clusters).toContain(`${CLUSTER}::${goodHost}::health_flags::healthy`);
    expect(clusters).toContain(`${CLUSTER}::outlier::success_rate_average::-1`);
    const stats = (await admin!.get('/stats')).text;
    expect(stat(stats, `cluster.${CLUSTER}.outlier_detection.ejections_active`)).toBe(1);
    expect(stat(stats, `cluster.${CLUSTER}.outlier_detection.ejections_enforced_consecutive_5xx`)).toBe(1);
    expect(stat(stats, `cluster.${CLUSTER}.upstream_rq_500`)).toBeGreaterThanOrEqual(3);
  });

  it('explain bcp/eject names the ejected host and the cause', async () => {
    const { report } = await explainJson(lab, 'bcp/eject', ns);
    const messages: string[] = report.findings.map((f: { message: string }) => f.message);
    expect(messages.some((m) => m.includes(`cluster ${CLUSTER} carries its outlierDetection`))).toBe(true);
    expect(
      messages.some((m) =>
        m.includes(`host ${badHost} of cluster ${CLUSTER} is /failed_outlier_check: outlier detection ejected it`),
      ),
    ).toBe(true);
    expect(messages.some((m) => m.includes('no healthy host'))).toBe(false);
  });
});
