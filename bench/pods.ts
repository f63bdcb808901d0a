// `npm run bench:pods`: the embedded node's speed, in one run.
// - create-Deployment → pod Ready latency, p50/p99 over 20 Deployments of a Node program that starts in 200 ms
//   (readiness probe httpGet), measured from the POST to availableReplicas=1 seen through the API;
// - the time to bring 50 pods (one Deployment, replicas 50) to Ready;
// - throughput of a LoadBalancer Service against a direct connection to the pod and against a bare Node TCP relay
//   running in the same (lab) process, side by side, with both ratios. The client runs in its own process
//   (`bench/relay.ts --client`).
// `[-- --runs 20] [--pods 50] [--mb 256] [--conns 4] [--rounds 3]`. Targets (issue): p50 < 1 s, 50 pods < 30 s,
// LoadBalancer ≥ 80% of the bare relay. Writes reports/bench/pods.json.
import { execFile } from 'node:child_process';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeClient } from '../lab/embedded/client/kube-client.ts';
import { startTestCluster } from '../lab/embedded/testing/test-cluster.ts';
import { progress, reportJson, writeReports } from './shared/reports.ts';
import { nearestRank } from './shared/stats.ts';
import { pipeTo, THROUGHPUT_OPTIONS } from './shared/tcp-throughput.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, 'testdata', 'pod-app.mjs');
const IMAGE = 'gwlab.bench/app:1';
const step = progress('pods');

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'bench' },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: 'app',
            image: IMAGE,
            ports: [{ containerPort: 8080 }, { containerPort: 9000 }],
            readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    },
  },
});

async function waitAvailable(client: KubeClient, name: string, n: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const d = await client.request('GET', `/apis/apps/v1/namespaces/bench/deployments/${name}`);
    if ((d.status?.availableReplicas ?? 0) >= n) return;
    if (Date.now() > end)
      throw new Error(`${name}: ${d.status?.availableReplicas ?? 0}/${n} available after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function clientRun(host: string, port: number, mb: number, conns: number): Promise<number> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [join(HERE, 'relay.ts'), '--client', host, String(port), String(mb), String(conns)],
      (err, out) => (err ? reject(err) : resolve(Number(out.trim()))),
    ),
  );
}

/** 1. `runs` Deployments of one replica, each from its POST to availableReplicas=1, then deleted. */
async function readyLatency(client: KubeClient, runs: number) {
  const lat: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await client.request('POST', '/apis/apps/v1/namespaces/bench/deployments', deployment(`lat-${i}`, 1));
    await waitAvailable(client, `lat-${i}`, 1, 30_000);
    lat.push(performance.now() - t0);
    await client.request('DELETE', `/apis/apps/v1/namespaces/bench/deployments/lat-${i}`);
  }
  const p50 = Math.round(nearestRank(lat, 50));
  const p99 = Math.round(nearestRank(lat, 99));
  step(`create-Deployment → Ready: p50 ${p50} ms, p99 ${p99} ms over ${runs}`);
  return { runs, p50, p99, target: 'p50 < 1000' };
}

/** 2. One Deployment of `n` replicas, from its POST to all available. */
async function podsReady(client: KubeClient, n: number) {
  const t0 = performance.now();
  await client.request('POST', '/apis/apps/v1/namespaces/bench/deployments', deployment('many', n));
  await waitAvailable(client, 'many', n, 120_000);
  const ms = Math.round(performance.now() - t0);
  step(`${n} pods Ready in ${ms} ms`);
  await client.request('DELETE', '/apis/apps/v1/namespaces/bench/deployments/many');
  return { pods: n, ms, target: '< 30000' };
}

/** The LoadBalancer address of Service `sink` and the IP of its (not deleted) pod, once both are there. */
async function sinkAddresses(client: KubeClient): Promise<{ lbIP: string; podIP: string }> {
  let lbIP = '';
  let podIP = '';
  for (let i = 0; i < 200 && !(lbIP && podIP); i++) {
    const svc = await client.request('GET', '/api/v1/namespaces/bench/services/sink');
    lbIP = svc.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
    const pods = await client.request('GET', '/api/v1/namespaces/bench/pods?labelSelector=app%3Dsink');
    podIP = pods.items.find((p: any) => !p.metadata.deletionTimestamp)?.status?.podIP ?? '';
    await new Promise((r) => setTimeout(r, 50));
  }
  return { lbIP, podIP };
}

/** 3. One pod behind a LoadBalancer Service; the bare relay (`bare`, listening at `bareIP`) runs in this process. */
async function throughput(
  client: KubeClient,
  bare: net.Server,
  bareIP: string,
  o: { mb: number; conns: number; rounds: number },
) {
  await client.request('POST', '/apis/apps/v1/namespaces/bench/deployments', deployment('sink', 1));
  await client.request('POST', '/api/v1/namespaces/bench/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'sink', namespace: 'bench' },
    spec: { type: 'LoadBalancer', selector: { app: 'sink' }, ports: [{ name: 'tcp', port: 9000 }] },
  });
  await waitAvailable(client, 'sink', 1, 30_000);
  const { lbIP, podIP } = await sinkAddresses(client);
  // The bare relay runs in this process, as the service proxy does.
  bare.on('connection', pipeTo(podIP, 9000));
  await new Promise<void>((r) => bare.listen(9000, bareIP, r));
  const paths = { direct: podIP, bareRelay: bareIP, loadBalancer: lbIP };
  for (const host of Object.values(paths)) await clientRun(host, 9000, 16, o.conns);
  const results: Record<string, number[]> = { direct: [], bareRelay: [], loadBalancer: [] };
  for (let r = 0; r < o.rounds; r++) {
    const order = Object.entries(paths);
    if (r % 2) order.reverse();
    for (const [name, host] of order) results[name]!.push(await clientRun(host, 9000, o.mb, o.conns));
  }
  const med = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, nearestRank(v, 50)]));
  step(
    `LoadBalancer ${med.loadBalancer} MB/s, bare relay ${med.bareRelay} MB/s, direct ${med.direct} MB/s: ` +
      `LB/bare ${(med.loadBalancer! / med.bareRelay!).toFixed(2)}, LB/direct ${(med.loadBalancer! / med.direct!).toFixed(2)}`,
  );
  return {
    ...med,
    loadBalancerVsBareRelay: +(med.loadBalancer! / med.bareRelay!).toFixed(3),
    loadBalancerVsDirect: +(med.loadBalancer! / med.direct!).toFixed(3),
    mb: o.mb,
    connections: o.conns,
    target: 'loadBalancerVsBareRelay >= 0.8',
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '20' },
      pods: { type: 'string', default: '50' },
      ...THROUGHPUT_OPTIONS,
    },
  });
  step('starting an embedded cluster');
  const c = await startTestCluster({ images: { [IMAGE]: ['node', APP] } });
  const client = new KubeClient(await c.lab.server.kubeConfig());
  const report: Record<string, unknown> = { when: new Date().toISOString() };
  const bare = net.createServer({ allowHalfOpen: true });
  try {
    await client.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'bench' },
    });
    report.readyLatencyMs = await readyLatency(client, Number(values.runs));
    // Let the latency pods go before the next phase.
    await new Promise((r) => setTimeout(r, 3000));
    report.podsReady = await podsReady(client, Number(values.pods));
    report.throughputMBps = await throughput(client, bare, `127.${c.plan.podOctet}.255.1`, {
      mb: Number(values.mb),
      conns: Number(values.conns),
      rounds: Number(values.rounds),
    });
  } finally {
    bare.close();
    await client.close();
    await c.stop();
  }
  writeReports({ 'pods.json': reportJson(report) });
  console.log(JSON.stringify(report, null, 2));
}

await main();
