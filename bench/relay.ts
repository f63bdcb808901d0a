// Benchmark of the service proxy's data path: bulk TCP throughput from a client to a sink pod, directly, through a
// bare Node relay (net.Server + socket.pipe both ways: the runtime's own ceiling) and through the ServiceProxy
// ClusterIP relay, side by side in one run, with both ratios. The relays run in a child process (the "lab process"),
// the client and the sink in this one.
//   node bench/relay.ts [--mb 256] [--conns 4] [--rounds 3]
// Writes reports/bench/relay.json.
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AddressPool } from '../lab/embedded/node/ipam.ts';
import { ServiceProxy } from '../lab/embedded/node/service-proxy.ts';
import { addressPlan, claimLabIndex } from '../lab/state.ts';

const PORT = 9000;

async function relayChild(sinkIP: string, sinkPort: number, bareIP: string, svcIP: string): Promise<void> {
  const bare = net.createServer({ allowHalfOpen: true }, (c) => {
    const u = net.connect({ host: sinkIP, port: sinkPort, allowHalfOpen: true });
    c.pipe(u);
    u.pipe(c);
    c.on('error', () => u.destroy());
    u.on('error', () => c.destroy());
  });
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

/** Sends `bytes` to host:port and waits for the sink to confirm them. */
export function transfer(host: string, bytes: number, port = PORT): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 120);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, noDelay: true });
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!s.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void s.once('drain', pump);
      }
      s.end();
    };
    s.once('connect', pump);
    let reply = '';
    s.setEncoding('utf8');
    s.on('data', (d) => (reply += d));
    s.on('end', () => (Number(reply) === bytes ? resolve() : reject(new Error(`sink got ${reply} of ${bytes}`))));
    s.on('error', reject);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mb: { type: 'string', default: '256' },
      conns: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const total = Number(values.mb) * 1024 * 1024;
  const conns = Number(values.conns);
  const rounds = Number(values.rounds);
  const claim = await claimLabIndex();
  const plan = addressPlan(claim.index);
  const pods = new AddressPool(plan.podOctet);
  const svcs = new AddressPool(plan.serviceOctet);
  const sinkIP = pods.allocate();
  const bareIP = pods.allocate();
  const svcIP = svcs.allocate();
  const sink = net.createServer({ allowHalfOpen: true }, (s) => {
    let n = 0;
    s.on('data', (d) => (n += d.length));
    s.on('end', () => s.end(String(n)));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => sink.listen(0, sinkIP, r));
  const sinkPort = (sink.address() as net.AddressInfo).port;
  // The direct path needs the same port: a second listener of the sink on PORT.
  const direct = net.createServer({ allowHalfOpen: true }, (s) => sink.emit('connection', s));
  await new Promise<void>((r) => direct.listen(PORT, sinkIP, r));
  const child = fork(fileURLToPath(import.meta.url), ['--relay', sinkIP, String(sinkPort), bareIP, svcIP], {
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
    for (const host of Object.values(paths)) await transfer(host, 16 * 1024 * 1024);
    for (let r = 0; r < rounds; r++) {
      const order = Object.entries(paths);
      if (r % 2) order.reverse();
      for (const [name, host] of order) {
        const t0 = process.hrtime.bigint();
        await Promise.all(Array.from({ length: conns }, () => transfer(host, Math.floor(total / conns))));
        const s = Number(process.hrtime.bigint() - t0) / 1e9;
        results[name].push(total / 1024 / 1024 / s);
      }
    }
  } finally {
    child.disconnect();
    child.kill();
    sink.close();
    direct.close();
    await claim.release();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mbps = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(median(v))]));
  const report = {
    when: new Date().toISOString(),
    mbPerRun: Number(values.mb),
    connections: conns,
    rounds,
    medianMBps: mbps,
    serviceProxyVsBareRelay: +(mbps.serviceProxy / mbps.bareRelay).toFixed(3),
    serviceProxyVsDirect: +(mbps.serviceProxy / mbps.direct).toFixed(3),
    target: 'serviceProxyVsBareRelay >= 0.8',
  };
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'reports', 'bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'relay.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(
    `relay throughput (median of ${rounds}, ${values.mb} MB over ${conns} connections): ` +
      `direct ${mbps.direct} MB/s, bare relay ${mbps.bareRelay} MB/s, service proxy ${mbps.serviceProxy} MB/s; ` +
      `service proxy / bare relay = ${report.serviceProxyVsBareRelay}, / direct = ${report.serviceProxyVsDirect}`,
  );
}

/**
 * Client mode, for benchmarks whose relays run in the calling process: `--client <host> <port> <MB> <conns>` prints
 * the MB/s of one transfer of MB over conns parallel connections.
 */
async function clientMain(host: string, port: number, mb: number, conns: number): Promise<void> {
  const total = mb * 1024 * 1024;
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: conns }, () => transfer(host, Math.floor(total / conns), port)));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  process.stdout.write(`${(mb / s).toFixed(1)}\n`);
}

if (process.argv[2] === '--client') {
  const [, , , host, port, mb, conns] = process.argv;
  await clientMain(host, Number(port), Number(mb), Number(conns));
} else if (process.argv[2] === '--relay') {
  const [, , , sinkIP, sinkPort, bareIP, svcIP] = process.argv;
  await relayChild(sinkIP, Number(sinkPort), bareIP, svcIP);
} else {
  await main();
}
