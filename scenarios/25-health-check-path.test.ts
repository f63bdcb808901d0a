// Issue 13 item 2 and "Bad input" as a user meets them: a BackendConfigPolicy with an active health check whose path
// the application does not serve (/status/404 on the sample application) and no healthy-panic fallback
// (healthyPanicThreshold 0). Every host fails its check: `/clusters` shows them `/failed_active_hc` as Envoy prints
// them, `cluster.<name>.health_check.failure` counts, and every request gets Envoy's 503 "no healthy upstream" (UH)
// while the proxy keeps serving. `explain bcp/<name>` names the cause (the health check path) and the 503 UH. Fixed
// by the path (/status/200): the hosts pass their checks and requests are 200 again. A ListenerPolicy access log
// (responseFlags UH) shows the first clue a user reads: code 503, flag UH, details no_healthy_upstream.
// (Envoy: docs arch_overview/upstream/health_checking, load_balancing/panic_threshold; api core/v3/health_check.proto.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s25-hc');
const host = 's25.example.com';
const CLUSTER = `kube_${ns}_web_8000`;
artifactNamespaces(ns);

const resources = `${namespaceWithGateway(ns)}---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8000, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: gwlab.local/system:0.1.0
        args: [sampleapp]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /status/200, port: 8080}, periodSeconds: 1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: web, port: 8000}]}]
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: ListenerPolicy
metadata: {name: uh-log, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  accessLog:
  - fileSink:
      path: /dev/stdout
      jsonFormat: {code: "%RESPONSE_CODE%", flags: "%RESPONSE_FLAGS%", details: "%RESPONSE_CODE_DETAILS%", cluster: "%UPSTREAM_CLUSTER%"}
    filter: {responseFlags: [UH]}
`;

const policy = (path: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: BackendConfigPolicy
metadata: {name: hc, namespace: ${ns}}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  loadBalancer: {healthyPanicThreshold: 0}
  healthCheck:
    http: {path: ${path}}
    interval: 1s
    timeout: 1s
    unhealthyThreshold: 1
    healthyThreshold: 1
`;

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/[.~]/g, '\\$&')}: (\\d+)$`, 'm'))?.[1] ?? 0);

describe('active health check: a path that 404s leaves no healthy host (503 UH); fixed by the path', () => {
  let admin: AdminSession | undefined;
  let url: string;
  let hosts: string[];
  const req = () => ({ url, path: '/get', host });

  /** The health_flags of the cluster's hosts in /clusters, once every one of them reads `flags`. */
  async function allHosts(flags: string): Promise<string> {
    return waitFor(`every host of ${CLUSTER} to read ${flags} in /clusters`, async () => {
      const text = (await admin!.get('/clusters')).text;
      const got = hosts.map((h) => text.match(new RegExp(`^${CLUSTER}::${h}::health_flags::(.*)$`, 'm'))?.[1]);
      return { ok: got.every((f) => f === flags), value: text, seen: got };
    });
  }

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForRollout('web', ns, { timeoutMs: 90_000 });
    hosts = (await lab.kube.list('v1', 'Pod', ns, 'app=web'))
      .filter((p) => p.status?.phase === 'Running')
      .map((p) => `${p.status!.podIP}:8080`);
    expect(hosts).toHaveLength(2);
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    await expectHttpEventually(req(), { status: 200 }, { timeoutMs: 60_000 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('the bug: health check path /status/404: every host /failed_active_hc, every request 503 no healthy upstream', async () => {
    await lab.kube.apply(policy('/status/404'));
    const p = await lab.kube.waitForCondition(VENDOR, 'BackendConfigPolicy', 'hc', ns, 'Attached', {
      timeoutMs: 60_000,
    });
    expect(p.status.ancestors[0].conditions.find((c: { type: string }) => c.type === 'Accepted').status).toBe('True');
    await waitFor(`config_dump's ${CLUSTER} to carry the health check`, async () => {
      const c = (await configDump(admin!)).configs
        .flatMap((x) => x.dynamic_active_clusters ?? [])
        .map((x: any) => x.cluster)
        .find((x: any) => x?.name === CLUSTER);
      const hc = c?.health_checks?.[0];
      return { ok: hc?.http_health_check?.path === '/status/404', seen: hc };
    });
    await allHosts('/failed_active_hc');
    const r = await expectHttpEventually(req(), { status: 503, body: 'no healthy upstream' }, { consecutive: 5 });
    expect(r.body).toBe('no healthy upstream');
    const stats = (await admin!.get('/stats')).text;
    expect(stat(stats, `cluster.${CLUSTER}.health_check.failure`)).toBeGreaterThanOrEqual(2);
    expect(stat(stats, `cluster.${CLUSTER}.health_check.healthy`)).toBe(0);
    expect(stat(stats, `cluster.${CLUSTER}.upstream_cx_none_healthy`)).toBeGreaterThanOrEqual(5);
    // The proxy keeps serving: its admin answers, and other clusters are unaffected.
    expect((await admin!.get('/ready')).text.trim()).toBe('LIVE');
    // The access log (kubectl logs of the proxy) has the 503 with Envoy's flag UH.
    const line = await waitFor('an access log line with flag UH in the proxy logs', async () => {
      const logs = await lab.kubectl(['logs', '-n', ns, 'deploy/gw']);
      const hit = logs.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((j) => j.flags === 'UH');
      return { ok: !!hit, value: hit, seen: logs.stdout.split('\n').slice(-5) };
    });
    // (The code compared as text: whether it is a JSON number, as Envoy's typed json_format writes it, is the access
    // logger's matter, not this scenario's.)
    expect({ ...line, code: String(line.code) }).toEqual({
      code: '503',
      flags: 'UH',
      details: 'no_healthy_upstream',
      cluster: CLUSTER,
    });
  });

  it('explain bcp/hc names the health check as the cause and the 503 UH', async () => {
    const { report } = await explainJson(lab, 'bcp/hc', ns);
    const messages: string[] = report.findings.map((f: { message: string }) => f.message);
    for (const h of hosts) {
      expect(
        messages.some((m) =>
          m.includes(`host ${h} of cluster ${CLUSTER} is /failed_active_hc: its active health check`),
        ),
      ).toBe(true);
    }
    expect(messages.some((m) => m.includes(`no healthy host in cluster ${CLUSTER}`) && m.includes('UH'))).toBe(true);
    expect(report.healthy).toBe(false);
  });

  it('the fix: the path /status/200: the hosts pass their checks, requests are 200 again', async () => {
    await lab.kube.apply(policy('/status/200'));
    await allHosts('healthy');
    await expectHttpEventually(req(), { status: 200 }, { consecutive: 5 });
    const { report } = await explainJson(lab, 'bcp/hc', ns);
    expect(report.findings.filter((f: { level: string }) => f.level === 'problem')).toEqual([]);
  });
});
