// Contract section 4 ("Neither interface is reached from outside by default. A port-forward to localhost is used to
// reach it") seen from another pod (issue 16 point 4): from a process of the sample application's pod, the gateway
// proxy's admin (19000) and the control plane's admin (9095) do not answer on their pod IPs, so a POST /quitquitquit
// cannot stop a gateway; what Prometheus scrapes does answer there, and nothing more: the proxy's 9091 /metrics
// (kgateway's stats listener: the admin's /stats/prometheus) and the control plane's 9092 /metrics. Both admins still
// answer through a port-forward. In a real cluster this is the pod network namespace's doing; on the embedded node,
// the pod loopback of the runtime hook (lab/embedded/node/README.md, "Network identity").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminSession,
  controlPlaneSelector,
  GATEWAY_NAME_LABEL,
  openControlPlaneAdmin,
  openProxyAdmin,
} from '../lab/toolkit/admin.ts';
import type { KObj } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { namespaceWithGateway } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const APP_NS = 'sampleapp';
const lab = useLab();
const ns = uniqueName('s14-adminlocal');
const resources = namespaceWithGateway(ns);
artifactNamespaces(ns, APP_NS);

/** Runs in the sample application's pod: each request's status and the first line of its body, or the error code. */
const PROBE = `
const targets = JSON.parse(process.argv[1]);
const out = {};
for (const [name, [method, url]] of Object.entries(targets)) {
  try {
    const r = await fetch(url, { method, signal: AbortSignal.timeout(5000) });
    out[name] = { status: r.status, first: (await r.text()).split('\\n').find((l) => !l.startsWith('#')) ?? '' };
  } catch (e) {
    out[name] = { error: e?.cause?.code ?? e?.name ?? String(e) };
  }
}
console.log(JSON.stringify(out));
`;

const isReady = (p: KObj) => !!p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

async function readyPod(namespace: string, selector: string): Promise<KObj> {
  return waitFor(`a Ready pod ${selector} in ${namespace}`, async () => {
    const pods = (await lab.kube.list('v1', 'Pod', namespace, selector)).filter(
      (p) => isReady(p) && !p.metadata?.deletionTimestamp,
    );
    return { ok: pods.length > 0, value: pods[0], seen: pods.map((p) => p.status?.phase) };
  });
}

describe('admin interfaces are pod-local; metrics are scrapeable (contract 4)', () => {
  let proxy: KObj;
  let cp: KObj;
  let seen: Record<string, { status?: number; first?: string; error?: string }>;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    proxy = await readyPod(ns, `${GATEWAY_NAME_LABEL}=gw`);
    cp = await readyPod('gwvendor-system', await controlPlaneSelector(lab.kube));
    const app = await readyPod(APP_NS, 'app=sampleapp');
    const gwIP = proxy.status!.podIP;
    const cpIP = cp.status!.podIP;
    const targets = {
      proxyQuit: ['POST', `http://${gwIP}:19000/quitquitquit`],
      proxyAdmin: ['GET', `http://${gwIP}:19000/ready`],
      cpAdmin: ['GET', `http://${cpIP}:9095/snapshots/xds`],
      proxyMetrics: ['GET', `http://${gwIP}:9091/metrics`],
      proxyMetricsQuit: ['POST', `http://${gwIP}:9091/quitquitquit`],
      proxyMetricsStats: ['GET', `http://${gwIP}:9091/stats/prometheus`],
      cpMetrics: ['GET', `http://${cpIP}:9092/metrics`],
      cpMetricsAdmin: ['GET', `http://${cpIP}:9092/snapshots/xds`],
    };
    const r = await lab.kubectl([
      'exec',
      '-n',
      APP_NS,
      app.metadata!.name!,
      '--',
      'node',
      '--input-type=module',
      '-e',
      PROBE,
      JSON.stringify(targets),
    ]);
    if (r.code !== 0) throw new Error(`kubectl exec failed (${r.code}): ${r.stderr}`);
    seen = JSON.parse(r.stdout);
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') await lab.kube.delete(resources, { wait: true }).catch(() => undefined);
  });

  it("refuses another pod on the proxy's 19000 and the control plane's 9095: /quitquitquit stops nothing", async () => {
    expect(seen.proxyQuit).toEqual({ error: 'ECONNREFUSED' });
    expect(seen.proxyAdmin).toEqual({ error: 'ECONNREFUSED' });
    expect(seen.cpAdmin).toEqual({ error: 'ECONNREFUSED' });
    const now = await lab.kube.get('v1', 'Pod', proxy.metadata!.name!, ns);
    expect(isReady(now!)).toBe(true);
    expect(now!.status!.containerStatuses[0].restartCount).toBe(proxy.status!.containerStatuses[0].restartCount);
  });

  it('serves /metrics and nothing else to another pod: the proxy on 9091, the control plane on 9092', () => {
    expect(seen.proxyMetrics.status).toBe(200);
    expect(seen.proxyMetrics.first).toMatch(/^envoy_\w+/);
    expect(seen.proxyMetricsQuit.status).toBe(404);
    expect(seen.proxyMetricsStats.status).toBe(404);
    expect(seen.cpMetrics.status).toBe(200);
    expect(seen.cpMetrics.first).toMatch(/^gwvendor_\w+|^process_\w+/);
    expect(seen.cpMetricsAdmin.status).toBe(404);
  });

  it('still serves both admins through a port-forward', async () => {
    const sessions: AdminSession[] = [];
    try {
      sessions.push(await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' }));
      sessions.push(await openControlPlaneAdmin(lab.kube));
      const ready = await sessions[0].get('/ready');
      expect([ready.status, ready.text.trim()]).toEqual([200, 'LIVE']);
      expect((await sessions[1].get('/snapshots/xds')).status).toBe(200);
    } finally {
      for (const s of sessions) await s.close();
    }
  });
});
