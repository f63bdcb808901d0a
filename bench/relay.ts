// Benchmark of the service proxy's data path (lab/embedded/node/service-proxy/service-proxy.ts): bulk TCP throughput from a client
// to a sink, directly, through a bare Node relay (net.Server + socket.pipe both ways: the runtime's own ceiling) and
// through the ServiceProxy ClusterIP relay, side by side in one run, with both ratios. The relays run in a child
// process (the "lab process"), the client and the sink in this one.
//   node bench/relay.ts [--mb 256] [--conns 4] [--rounds 3]
// Writes reports/bench/relay.json. `--client <host> <port> <MB> <conns>` prints the MB/s of one transfer (bench:pods
// runs its client that way, in a process of its own).
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AddressPool } from '../lab/embedded/ipam.ts';
import { ServiceProxy } from '../lab/embedded/node/service-proxy/service-proxy.ts';
import { addressPlan, claimLabIndex } from '../lab/state.ts';
import { reportJson, writeReports } from './shared/reports.ts';
import { percentile } from './shared/stats.ts';
import { pipeTo, THROUGHPUT_OPTIONS, transfer, transferMBps } from './shared/tcp-throughput.ts';

const PORT = 9000;

async function relayChild(sinkIP: string, sinkPort: number, bareIP: string, svcIP: string): Promise<void> {
  const bare = net.createServer({ allowHalfOpen: true }, pipeTo(sinkIP, sinkPort));
  await new Promise<void>((r) => bare.listen(PORT, bareIP, r));
  const proxy = new ServiceProxy();
  await proxy.apply({
    namespace: 'bench',
    name: 'sink',
    clusterIP: svcIP,
    ports: [{ name: 'tcp', port: PORT }],
    endpoints: { tcp: [{ ip: sinkIP, port: sinkPort }] },
  });
  process.send?.('ready');
  process.on('disconnect', () => process.exit(0));
}

/** The sink (counts bytes, answers the count on half-close) on `ip`, on a free port and on PORT (the direct path). */
async function startSink(ip: string): Promise<{ port: number; close(): void }> {
  const sink = net.createServer({ allowHalfOpen: true }, (s) => {
    let n = 0;
    s.on('data', (d) => (n += d.length));
    s.on('end', () => s.end(String(n)));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => sink.listen(0, ip, r));
  // The direct path needs the same port: a second listener of the sink on PORT.
  const direct = net.createServer({ allowHalfOpen: true }, (s) => sink.emit('connection', s));
  await new Promise<void>((r) => direct.listen(PORT, ip, r));
  return {
    port: (sink.address() as net.AddressInfo).port,
    close() {
      sink.close();
      direct.close();
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: THROUGHPUT_OPTIONS,
  });
  const conns = Number(values.conns);
  const rounds = Number(values.rounds);
  const claim = await claimLabIndex();
  const plan = addressPlan(claim.index);
  const pods = new AddressPool(plan.podOctet);
  const svcs = new AddressPool(plan.serviceOctet);
  const sinkIP = pods.allocate();
  const bareIP = pods.allocate();
  const svcIP = svcs.allocate();
  const sink = await startSink(sinkIP);
  const child = fork(fileURLToPath(import.meta.url), ['--relay', sinkIP, String(sink.port), bareIP, svcIP], {
    stdio: 'inherit',
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (c) => reject(new Error(`relay process exited ${c}`)));
  });
  const paths = { direct: sinkIP, bareRelay: bareIP, serviceProxy: svcIP } as const;
  const results: Record<string, number[]> = { direct: [], bareRelay: [], serviceProxy: [] };
  try {
    // Warm-up, then alternate the order so no path always runs first.
    for (const host of Object.values(paths)) await transfer(host, 16 * 1024 * 1024, PORT);
    for (let r = 0; r < rounds; r++) {
      const order = Object.entries(paths);
      if (r % 2) order.reverse();
      for (const [name, host] of order) results[name]!.push(await transferMBps(host, PORT, Number(values.mb), conns));
    }
  } finally {
    child.disconnect();
    child.kill();
    sink.close();
    await claim.release();
  }
  const mbps = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(percentile(v, 50))]));
  const report = {
    when: new Date().toISOString(),
    mbPerRun: Number(values.mb),
    connections: conns,
    rounds,
    medianMBps: mbps,
    serviceProxyVsBareRelay: +(mbps.serviceProxy! / mbps.bareRelay!).toFixed(3),
    serviceProxyVsDirect: +(mbps.serviceProxy! / mbps.direct!).toFixed(3),
    target: 'serviceProxyVsBareRelay >= 0.8',
  };
  writeReports({ 'relay.json': reportJson(report) });
  console.log(
    `relay throughput (median of ${rounds}, ${values.mb} MB over ${conns} connections): ` +
      `direct ${mbps.direct} MB/s, bare relay ${mbps.bareRelay} MB/s, service proxy ${mbps.serviceProxy} MB/s; ` +
      `service proxy / bare relay = ${report.serviceProxyVsBareRelay}, / direct = ${report.serviceProxyVsDirect}`,
  );
}

if (process.argv[2] === '--client') {
  const [, , , host, port, mb, conns] = process.argv;
  const mbps = await transferMBps(host!, Number(port), Number(mb), Number(conns));
  process.stdout.write(`${mbps.toFixed(1)}\n`);
} else if (process.argv[2] === '--relay') {
  const [, , , sinkIP, sinkPort, bareIP, svcIP] = process.argv;
  await relayChild(sinkIP!, Number(sinkPort), bareIP!, svcIP!);
} else {
  await main();
}
