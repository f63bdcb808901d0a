// `npm run bench:pods`: the embedded node's speed, in one run.
// - create-Deployment → pod Ready latency, p50/p99 over 20 Deployments of a Node program that starts in 200 ms
//   (readiness probe httpGet), measured from the POST to availableReplicas=1 seen through the API;
// - the time to bring 50 pods (one Deployment, replicas 50) to Ready;
// - throughput of a LoadBalancer Service against a direct connection to the pod and against a bare Node TCP relay
//   running in the same (lab) process, side by side, with both ratios. The client runs in its own process.
// Targets (issue): p50 < 1 s, 50 pods < 30 s, LoadBalancer ≥ 80% of the bare relay. Writes reports/bench/pods.json.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeClient } from '../lab/embedded/controllers/kube.ts';
import { startTestCluster } from '../lab/embedded/node/cluster-testing.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, 'testdata', 'pod-app.mjs');
const IMAGE = 'gwlab.bench/app:1';

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

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

function clientRun(host: string, port: number, mb: number, conns: number): Promise<number> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [join(HERE, 'relay.ts'), '--client', host, String(port), String(mb), String(conns)],
      (err, out) => (err ? reject(err) : resolve(Number(out.trim()))),
    ),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '20' },
      pods: { type: 'string', default: '50' },
      mb: { type: 'string', default: '256' },
      conns: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const t = (label: string) => process.stderr.write(`[bench:pods] ${label}\n`);
  t('starting an embedded cluster');
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
    // 1. Latency.
    const runs = Number(values.runs);
    const lat: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await client.request('POST', '/apis/apps/v1/namespaces/bench/deployments', deployment(`lat-${i}`, 1));
      await waitAvailable(client, `lat-${i}`, 1, 30_000);
      lat.push(performance.now() - t0);
      await client.request('DELETE', `/apis/apps/v1/namespaces/bench/deployments/lat-${i}`);
    }
    report.readyLatencyMs = {
      runs,
      p50: Math.round(pct(lat, 50)),
      p99: Math.round(pct(lat, 99)),
      target: 'p50 < 1000',
    };
    t(`create-Deployment → Ready: p50 ${Math.round(pct(lat, 50))} ms, p99 ${Math.round(pct(lat, 99))} ms over ${runs}`);
    // Let the latency pods go before the next phase.
    await new Promise((r) => setTimeout(r, 3000));
    // 2. Fifty pods.
    const n = Number(values.pods);
    const t0 = performance.now();
    await client.request('POST', '/apis/apps/v1/namespaces/bench/deployments', deployment('many', n));
    await waitAvailable(client, 'many', n, 120_000);
    const manyMs = Math.round(performance.now() - t0);
    report.podsReady = { pods: n, ms: manyMs, target: '< 30000' };
    t(`${n} pods Ready in ${manyMs} ms`);
    await client.request('DELETE', '/apis/apps/v1/namespaces/bench/deployments/many');
    // 3. Throughput: one pod behind a LoadBalancer Service.
    await client.request('POST', '/apis/apps/v1/namespaces/bench/deployments', deployment('sink', 1));
    await client.request('POST', '/api/v1/namespaces/bench/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'sink', namespace: 'bench' },
      spec: { type: 'LoadBalancer', selector: { app: 'sink' }, ports: [{ name: 'tcp', port: 9000 }] },
    });
    await waitAvailable(client, 'sink', 1, 30_000);
    let lbIP = '';
    let podIP = '';
    for (let i = 0; i < 200 && !(lbIP && podIP); i++) {
      const svc = await client.request('GET', '/api/v1/namespaces/bench/services/sink');
      lbIP = svc.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
      const pods = await client.request('GET', '/api/v1/namespaces/bench/pods?labelSelector=app%3Dsink');
      podIP = pods.items.find((p: any) => !p.metadata.deletionTimestamp)?.status?.podIP ?? '';
      await new Promise((r) => setTimeout(r, 50));
    }
    // The bare relay runs in this process, as the service proxy does.
    bare.on('connection', (cs) => {
      const u = net.connect({ host: podIP, port: 9000, allowHalfOpen: true });
      cs.pipe(u);
      u.pipe(cs);
      cs.on('error', () => u.destroy());
      u.on('error', () => cs.destroy());
    });
    const bareIP = `127.${c.plan.podOctet}.255.1`;
    await new Promise<void>((r) => bare.listen(9000, bareIP, r));
    const mb = Number(values.mb);
    const conns = Number(values.conns);
    const paths = { direct: podIP, bareRelay: bareIP, loadBalancer: lbIP };
    for (const host of Object.values(paths)) await clientRun(host, 9000, 16, conns);
    const results: Record<string, number[]> = { direct: [], bareRelay: [], loadBalancer: [] };
    for (let r = 0; r < Number(values.rounds); r++) {
      const order = Object.entries(paths);
      if (r % 2) order.reverse();
      for (const [name, host] of order) results[name].push(await clientRun(host, 9000, mb, conns));
    }
    const med = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, pct(v, 50)]));
    report.throughputMBps = {
      ...med,
      loadBalancerVsBareRelay: +(med.loadBalancer / med.bareRelay).toFixed(3),
      loadBalancerVsDirect: +(med.loadBalancer / med.direct).toFixed(3),
      mb,
      connections: conns,
      target: 'loadBalancerVsBareRelay >= 0.8',
    };
    t(
      `LoadBalancer ${med.loadBalancer} MB/s, bare relay ${med.bareRelay} MB/s, direct ${med.direct} MB/s: ` +
        `LB/bare ${(med.loadBalancer / med.bareRelay).toFixed(2)}, LB/direct ${(med.loadBalancer / med.direct).toFixed(2)}`,
    );
  } finally {
    bare.close();
    await client.close();
    await c.stop();
  }
  const out = join(HERE, '..', 'reports', 'bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'pods.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(JSON.stringify(report, null, 2));
}

await main();
