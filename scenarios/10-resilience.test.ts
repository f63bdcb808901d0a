// Resilience of the data path:
// - a control plane restart drops no traffic: a steady 50 requests/s through the gateway while
//   `kubectl rollout restart deploy/gwvendor -n gwvendor-system` runs get only 2xx answers, and the proxy resyncs
//   (the new control plane's /snapshots/xds shows it ACKed every type at the snapshot's versions);
// - a killed proxy pod comes back and serves;
// - a backend scaled to 0 answers 503 `no healthy upstream`, and 200 again once scaled back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_NAME_LABEL, openControlPlaneAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import type { KObj } from '../lab/toolkit/kube.ts';
import { isPodReady } from '../lab/toolkit/portforward.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const CP_NS = 'gwvendor-system';
const lab = useLab();
const ns = uniqueName('s10-resilience');
const host = 's10.example.com';
const role = `gwvendor-kube-gateway-api~${ns}~gw`;
const RATE = 50;
artifactNamespaces(ns);

/**
 * A steady open-loop load: one request due every 1000/rate ms, whatever the answers' latency. Each tick sends every
 * request that has come due since the last one, so a timer that fires late (a busy machine: the scenarios run side
 * by side with the unit tests) delays requests instead of dropping them from the rate.
 */
function steadyLoad(url: string, rate: number) {
  const answers: Array<{ at: number; status?: number; error?: string }> = [];
  const inflight = new Set<Promise<void>>();
  const started = performance.now();
  let sent = 0;
  const timer = setInterval(() => {
    const at = performance.now() - started;
    for (const due = Math.floor((at * rate) / 1000); sent < due; sent++) {
      const p = send({ url, path: '/status/200', host, timeoutMs: 5_000 })
        .then(
          (r) => void answers.push({ at, status: r.status }),
          (err: Error) => void answers.push({ at, error: err.message }),
        )
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
  }, 1000 / rate);
  return {
    answers,
    async stop() {
      clearInterval(timer);
      await Promise.all(inflight);
      return { seconds: (performance.now() - started) / 1000, answers };
    },
  };
}

async function proxyPods(): Promise<KObj[]> {
  return lab.kube.list('v1', 'Pod', ns, `${GATEWAY_NAME_LABEL}=gw`);
}

/** The control plane's /snapshots/xds shows the proxy pod ACKing every type at the snapshot's current versions. */
async function waitProxyAcked(cpPodNot?: string): Promise<{ cpPod: string; nodeId: string }> {
  return waitFor(
    `a new control plane's /snapshots/xds to show the proxy of ${ns}/gw ACKed`,
    async () => {
      const cp = await openControlPlaneAdmin(lab.kube);
      try {
        if (cp.pod === cpPodNot) return { ok: false, seen: `still the old control plane pod ${cp.pod}` };
        const ready = (await proxyPods()).filter(isPodReady).map((p) => `${p.metadata!.name}.${ns}`);
        const view = await cp.json<any>('/snapshots/xds');
        const snap = view.data?.[role];
        if (!snap) return { ok: false, seen: view.reason ?? Object.keys(view.data ?? {}) };
        for (const [nodeId, p] of Object.entries<any>(snap.proxies ?? {})) {
          if (!ready.includes(nodeId)) continue;
          const types = Object.entries<any>(snap.type_versions);
          const acked = types.every(
            ([short, v]) => p.types?.[short]?.status === 'ACKED' && p.types[short].version_acked === v,
          );
          if (acked) return { ok: true, value: { cpPod: cp.pod, nodeId } };
        }
        return { ok: false, seen: { ready, proxies: snap.proxies, versions: snap.type_versions } };
      } finally {
        await cp.close();
      }
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

describe('resilience', () => {
  let url: string;
  const req = () => ({ url, path: '/headers', host });

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    await lab.kube.waitForRollout('sampleapp', ns, { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    await expectHttpEventually(req(), { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    // Whatever happened, later scenarios get a rolled-out control plane.
    await lab.kube.waitForRollout('gwvendor', CP_NS, { timeoutMs: 90_000 }).catch(() => undefined);
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it(`a control plane restart under ${RATE} req/s: 0 non-2xx, and the proxy resyncs with the new control plane`, async () => {
    const { cpPod: oldCp } = await waitProxyAcked();
    const load = steadyLoad(url, RATE);
    let result: Awaited<ReturnType<typeof load.stop>>;
    let resynced: { cpPod: string; nodeId: string };
    try {
      // A second of load before the restart, so that the restart happens under load.
      await waitFor('load to be flowing', async () => ({ ok: load.answers.length >= RATE }), { timeoutMs: 10_000 });
      await lab.k(['rollout', 'restart', 'deploy/gwvendor', '-n', CP_NS]);
      const status = await lab.kubectl(['rollout', 'status', 'deploy/gwvendor', '-n', CP_NS, '--timeout=90s'], {
        timeoutMs: 100_000,
      });
      expect(status.code, status.stderr).toBe(0);
      resynced = await waitProxyAcked(oldCp);
    } finally {
      result = await load.stop();
    }
    const bad = result.answers.filter((a) => a.error !== undefined || a.status! < 200 || a.status! >= 300);
    const rate = result.answers.length / result.seconds;
    console.log(
      `control plane restart: ${result.answers.length} requests in ${result.seconds.toFixed(1)} s (${rate.toFixed(1)}/s), ${bad.length} non-2xx or failed; resynced with ${resynced.cpPod}`,
    );
    expect(bad, `non-2xx or failed answers out of ${result.answers.length}`).toEqual([]);
    expect(rate, 'requests per second actually sent').toBeGreaterThan(RATE * 0.8);
    expect(resynced.cpPod).not.toBe(oldCp);
    // The data path still takes new configuration from the new control plane.
    await lab.kube.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'after-restart', namespace: ns },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: [`after.${host}`],
        rules: [{ backendRefs: [{ name: 'sampleapp', port: 8000 }] }],
      },
    });
    await expectHttpEventually({ url, path: '/headers', host: `after.${host}` }, { status: 200 });
  });

  it('a killed proxy pod comes back and serves', async () => {
    const before = (await proxyPods()).filter(isPodReady).map((p) => p.metadata!.name!);
    expect(before.length).toBe(1);
    await lab.k(['delete', 'pod', before[0], '-n', ns, '--wait=false']);
    const replacement = await waitFor(
      `a new Ready proxy pod for ${ns}/gw`,
      async () => {
        const pods = await proxyPods();
        const fresh = pods.filter((p) => isPodReady(p) && !before.includes(p.metadata!.name!));
        return { ok: fresh.length > 0, value: fresh[0]?.metadata?.name, seen: pods.map((p) => p.metadata?.name) };
      },
      { timeoutMs: 60_000 },
    );
    expect(replacement).not.toBe(before[0]);
    await expectHttpEventually(req(), { status: 200 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed');
  });

  it('a backend scaled to 0 answers 503 "no healthy upstream"; scaled back, 200', async () => {
    await lab.k(['scale', 'deploy/sampleapp', '-n', ns, '--replicas=0']);
    await expectHttpEventually(req(), { status: 503, body: 'no healthy upstream' });
    await lab.k(['scale', 'deploy/sampleapp', '-n', ns, '--replicas=1']);
    await expectHttpEventually(req(), { status: 200 }, { timeoutMs: 60_000 });
  });
});
